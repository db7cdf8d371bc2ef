#pragma once
// Runs the built `weir` binary as a user would: arguments, stdin, captured stdout and stderr, and a
// bounded wait (a hung command is killed and reported, never waited on forever).
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "spawn.hpp"

namespace weir::test {

constexpr std::chrono::seconds kRunTimeout{60};  // no single weir command in a test may take longer

struct RunResult {
  int exit_code = -1;  // -1: killed, by a signal or the timeout
  std::string out;
  std::string err;
};

// Runs weir with `args`, feeding `input` on stdin; stdout and stderr are captured separately.
inline RunResult run_weir(const std::vector<std::string>& args, std::string_view input = {}) {
  TempFile in(std::tmpfile());
  REQUIRE(in);
  if (!input.empty()) REQUIRE(std::fwrite(input.data(), 1, input.size(), in.get()) == input.size());
  std::fflush(in.get());
  std::rewind(in.get());
  SpawnOptions options;
  options.in = fileno(in.get());
  CapturedProcess child(command(WEIR_CLI_PATH, args), CapturedProcess::Output::separate, options);
  REQUIRE(child.valid());
  const ExitStatus status = child.wait(kRunTimeout);
  RunResult result;
  result.exit_code = status.exited ? status.code : -1;
  result.out = child.out();
  result.err = child.err();
  return result;
}

}  // namespace weir::test

#pragma once
// Runs a program (the snapshot checker under /usr/bin/python3, h5dump) with captured output and a
// bounded wait: a hung program is killed and reported, never waited on forever.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include "spawn.hpp"

namespace weir::test {

inline constexpr std::chrono::seconds kProgramTimeout{60};  // no checker run may take longer

struct ProgramResult {
  int exit_code = -1;  // -1: killed, by a signal or the timeout
  std::string out;     // stdout and stderr together
};

inline ProgramResult run_program(const std::string& path, const std::vector<std::string>& args) {
  CapturedProcess program(command(path, args), CapturedProcess::Output::merged);
  REQUIRE(program.valid());
  const ExitStatus status = program.wait(kProgramTimeout);
  ProgramResult result;
  result.exit_code = status.exited ? status.code : -1;
  result.out = program.out();
  return result;
}

/// Runs check_snapshot.py on a file with the given expectations; the test fails with its message.
inline void check_snapshot(const std::string& file, std::vector<std::string> expectations) {
  expectations.insert(expectations.begin(), {WEIR_SNAPSHOT_CHECKER, file});
  const ProgramResult r = run_program("/usr/bin/python3", expectations);
  INFO("check_snapshot.py " << file << ": " << r.out);
  CHECK(r.exit_code == 0);
}

}  // namespace weir::test

#pragma once
// Runs the built `weir` binary in the background (a supervisor, a recorder, a shard host), with its
// stdout and stderr in one temporary file, so a test can signal it, wait for it with a bound, and
// read what it said.
#include <doctest/doctest.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "spawn.hpp"

namespace weir::test {

/// weir with args; output() is everything it printed so far. Killed and reaped by the destructor
/// if still running; signal() and wait_exit() as for any ChildProcess.
class BackgroundWeir : public CapturedProcess {
 public:
  explicit BackgroundWeir(const std::vector<std::string>& args)
      : CapturedProcess(command(WEIR_CLI_PATH, args), Output::merged) {
    REQUIRE(valid());
  }

  /// Everything it printed so far.
  [[nodiscard]] std::string output() const { return out(); }
};

/// Polls `ready` every 10 ms for up to `timeout`; true once it held.
inline bool eventually(const std::function<bool()>& ready, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return ready();
}

}  // namespace weir::test

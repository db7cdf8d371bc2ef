#pragma once
// Runs the built `weir` binary in the background (a supervisor, a recorder, a shard host), with its
// stdout and stderr in one temporary file, so a test can signal it, wait for it with a bound, and
// read what it said.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "run_weir.hpp"

namespace weir::test {

class BackgroundWeir {
 public:
  explicit BackgroundWeir(const std::vector<std::string>& args) : log_(std::tmpfile()) {
    REQUIRE(log_);
    // Appending: reading the file back moves the offset the child shares, but never where it writes.
    REQUIRE(fcntl(fileno(log_.get()), F_SETFL, O_APPEND) == 0);
    std::vector<std::string> argv_text{WEIR_CLI_PATH};
    argv_text.insert(argv_text.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argv_text) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::fflush(nullptr);
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      if (dup2(fileno(log_.get()), STDOUT_FILENO) < 0 || dup2(fileno(log_.get()), STDERR_FILENO) < 0) _exit(kExecFailed);
      execv(argv[0], argv.data());
      _exit(kExecFailed);
    }
  }
  BackgroundWeir(const BackgroundWeir&) = delete;
  BackgroundWeir& operator=(const BackgroundWeir&) = delete;
  ~BackgroundWeir() {
    if (pid_ > 0 && exit_code_ == kRunning) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  [[nodiscard]] pid_t pid() const noexcept { return pid_; }
  void signal(int sig) const { REQUIRE(kill(pid_, sig) == 0); }

  /// Waits up to `timeout` for the process to end; returns its exit code (-1: killed by a signal,
  /// kRunning: still running after the timeout).
  int wait(std::chrono::milliseconds timeout) {
    if (exit_code_ != kRunning) return exit_code_;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    int status = 0;
    while (std::chrono::steady_clock::now() < deadline) {
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        return exit_code_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return kRunning;
  }

  /// Everything it printed so far.
  [[nodiscard]] std::string output() const {
    std::fflush(log_.get());
    return read_all(log_.get());
  }

  static constexpr int kRunning = -1000;

 private:
  TempFile log_;
  pid_t pid_ = -1;
  int exit_code_ = kRunning;
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

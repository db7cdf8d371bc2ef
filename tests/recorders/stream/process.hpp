#pragma once
// Child processes for the recorder tests: a program run with its stdout and stderr captured and a
// bounded wait (past it the child is killed), and a scratch directory removed however a test ends.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "scratch_dir.hpp"
#include "spawn.hpp"

namespace weir::test {

using namespace std::chrono_literals;

inline constexpr std::chrono::seconds kToolTimeout{30};  // no tool run of these tests takes longer
inline constexpr std::chrono::milliseconds kPoll{5};     // between looks at what a test waits for

/// How a program ended, and what it printed.
struct Exit : ExitStatus {
  std::string out, err;
};

/// A fresh directory under /tmp, removed (with whatever is left in it) at the end of the test.
struct TempDir : ScratchDir {
  TempDir() : ScratchDir("rec-test") {}
};

/// A child process with stdin on /dev/null and stdout and stderr captured; killed and reaped if
/// still running when destroyed, its stderr then checked like wait()'s.
class Program {
 public:
  /// Starts argv[0] with argv; `env` entries ("NAME=value") are added to the inherited environment.
  static Program start(const std::vector<std::string>& argv, const std::vector<std::string>& env = {}) {
    const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    REQUIRE(in >= 0);
    SpawnOptions options;
    options.in = in;
    options.env = env;
    Program p(CapturedProcess(argv, CapturedProcess::Output::separate, options));
    ::close(in);
    REQUIRE(p.process_.valid());
    return p;
  }
  Program(Program&&) noexcept = default;
  Program& operator=(Program&&) = delete;
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  ~Program() {
    if (!waited_ && process_.valid()) {
      (void)process_.signal(SIGKILL);
      (void)wait(1s);
    }
  }

  [[nodiscard]] pid_t pid() const { return process_.pid(); }
  void signal(int sig) const { (void)process_.signal(sig); }
  [[nodiscard]] bool running() const { return process_.running(); }
  /// Reaps the child, SIGKILLing it once the timeout passes; returns how it ended and its output.
  Exit wait(std::chrono::milliseconds timeout = kToolTimeout) {
    Exit e;
    if (waited_) return e;
    waited_ = true;
    static_cast<ExitStatus&>(e) = process_.wait(timeout);
    e.out = process_.out();
    e.err = process_.err();
    // A sanitizer build's children report there: any report fails the test that ran them.
    CHECK_MESSAGE(e.err.find("Sanitizer") == std::string::npos, e.err);
    CHECK_MESSAGE(e.err.find("runtime error:") == std::string::npos, e.err);
    return e;
  }

 private:
  explicit Program(CapturedProcess process) : process_(std::move(process)) {}
  CapturedProcess process_;
  bool waited_ = false;
};

inline Exit run_program(const std::vector<std::string>& argv, std::chrono::milliseconds timeout = kToolTimeout) {
  return Program::start(argv).wait(timeout);
}

}  // namespace weir::test

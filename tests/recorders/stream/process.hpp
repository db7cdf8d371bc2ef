#pragma once
// Child processes for the recorder tests: a program run with its stdout and stderr captured and a
// bounded wait (past it the child is killed), and a scratch directory removed however a test ends.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace weir::test {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

inline constexpr std::chrono::seconds kToolTimeout{30};  // no tool run of these tests takes longer
inline constexpr std::chrono::milliseconds kPoll{5};

struct Exit {
  bool exited = false;
  int code = -1;
  int signal = 0;
  bool timed_out = false;
  std::string out, err;
};

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// A fresh directory under /tmp, removed (with whatever is left in it) at the end of the test.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> serial{0};
    path_ = std::filesystem::temp_directory_path() /
            ("weir-rec-test-" + std::to_string(getpid()) + "-" + std::to_string(serial.fetch_add(1)));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  [[nodiscard]] std::string str() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

/// A child process with stdout and stderr captured in files; killed and reaped if still running
/// when destroyed.
class Program {
 public:
  /// Starts argv[0] with argv; `env` entries ("NAME=value") are added to the inherited environment.
  static Program start(const std::vector<std::string>& argv, const std::vector<std::string>& env = {}) {
    static std::atomic<int> serial{0};
    Program p;
    const std::string stem = std::filesystem::temp_directory_path() /
                             ("weir-rec-out-" + std::to_string(getpid()) + "-" + std::to_string(serial.fetch_add(1)));
    p.out_ = stem + ".out";
    p.err_ = stem + ".err";
    std::vector<std::string> copy = argv;
    std::vector<char*> args;
    for (std::string& a : copy) args.push_back(a.data());
    args.push_back(nullptr);
    std::fflush(nullptr);
    p.pid_ = fork();
    REQUIRE(p.pid_ >= 0);
    if (p.pid_ == 0) {
      const int in = ::open("/dev/null", O_RDONLY);
      const int out = ::open(p.out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      const int err = ::open(p.err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(127);
      for (const std::string& e : env) putenv(const_cast<char*>(e.c_str()));  // the child's copy, kept until exec
      execv(args[0], args.data());
      _exit(127);
    }
    return p;
  }
  Program() = default;
  Program(Program&& o) noexcept
      : pid_(std::exchange(o.pid_, -1)), out_(std::move(o.out_)), err_(std::move(o.err_)) {}
  Program& operator=(Program&& o) noexcept {
    if (this != &o) {
      reap_now();
      pid_ = std::exchange(o.pid_, -1);
      out_ = std::move(o.out_);
      err_ = std::move(o.err_);
    }
    return *this;
  }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  ~Program() { reap_now(); }

  [[nodiscard]] pid_t pid() const { return pid_; }
  void signal(int sig) const {
    if (pid_ > 0) ::kill(pid_, sig);
  }
  [[nodiscard]] bool running() const { return pid_ > 0 && waitpid(pid_, nullptr, WNOHANG) == 0; }
  /// Reaps the child, SIGKILLing it once the timeout passes; returns how it ended and its output.
  Exit wait(std::chrono::milliseconds timeout = kToolTimeout) {
    Exit e;
    if (pid_ <= 0) return e;
    int status = 0;
    const auto deadline = Clock::now() + timeout;
    pid_t r = 0;
    while ((r = waitpid(pid_, &status, WNOHANG)) == 0 && Clock::now() < deadline) std::this_thread::sleep_for(kPoll);
    if (r == 0) {
      ::kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      e.timed_out = true;
    }
    pid_ = -1;
    e.exited = WIFEXITED(status);
    e.code = e.exited ? WEXITSTATUS(status) : -1;
    e.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    e.out = slurp(out_);
    e.err = slurp(err_);
    // A sanitizer build's children report there: any report fails the test that ran them.
    CHECK_MESSAGE(e.err.find("Sanitizer") == std::string::npos, e.err);
    CHECK_MESSAGE(e.err.find("runtime error:") == std::string::npos, e.err);
    std::error_code ec;
    std::filesystem::remove(out_, ec);
    std::filesystem::remove(err_, ec);
    return e;
  }

 private:
  void reap_now() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    (void)wait(1s);
  }
  pid_t pid_ = -1;
  std::string out_, err_;
};

inline Exit run_program(const std::vector<std::string>& argv, std::chrono::milliseconds timeout = kToolTimeout) {
  return Program::start(argv).wait(timeout);
}

}  // namespace weir::test

#pragma once
// Real processes for the integration tests: forked children that report counters back through a
// pipe, a start gate, bounded waits that end in SIGKILL, and a guard that removes arenas.
#include <fcntl.h>
#include <poll.h>
#include <sys/types.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "arena_guard.hpp"
#include "spawn.hpp"

namespace weir::test {

using std::chrono::milliseconds;

inline constexpr milliseconds kChildTimeout{15'000};  // no child of these tests may run longer
inline constexpr int kChildThrew = 126;                // exit code of a child whose body threw

inline int remaining_ms(Clock::time_point deadline) noexcept {
  const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(left);
}

/// Reads exactly n bytes or fails at EOF, error or deadline.
inline bool read_exact(int fd, void* out, std::size_t n, Clock::time_point deadline) noexcept {
  auto* p = static_cast<unsigned char*>(out);
  while (n > 0) {
    pollfd pfd{fd, POLLIN, 0};
    const int ready = poll(&pfd, 1, remaining_ms(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    const ssize_t got = ::read(fd, p, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

inline bool write_all(int fd, const void* in, std::size_t n) noexcept {
  const auto* p = static_cast<const unsigned char*>(in);
  while (n > 0) {
    const ssize_t put = ::write(fd, p, n);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    p += put;
    n -= static_cast<std::size_t>(put);
  }
  return true;
}

/// Counters a child sends back; what each entry means is up to the test.
using Report = std::array<std::uint64_t, 8>;

inline constexpr char kReadyByte = 'r';
inline constexpr char kReportByte = 'R';

/// The child's end of its pipe to the parent.
class ChildLink {
 public:
  explicit ChildLink(int fd) noexcept : fd_(fd) {}
  /// Tells the parent the child reached a point it waits for (Child::wait_ready).
  void ready() const noexcept { (void)write_all(fd_, &kReadyByte, 1); }
  void send_report() const noexcept {
    (void)write_all(fd_, &kReportByte, 1);
    (void)write_all(fd_, report.data(), sizeof(report));
  }
  Report report{};

 private:
  int fd_;
};

/// A forked child process. The destructor kills and reaps a child still running.
class Child {
 public:
  /// Forks; the child runs fn(ChildLink&) -> int, sends its report, and _exits with fn's result
  /// (never returning into the test runner). Returns an invalid Child if fork or pipe failed.
  template <class Fn>
  static Child spawn(Fn&& fn) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return Child{};
    const pid_t pid = fork();
    if (pid == 0) {
      ::close(fds[0]);
      ChildLink link(fds[1]);
      int code = kChildThrew;
      try {
        code = fn(link);
      } catch (...) {
        code = kChildThrew;
      }
      link.send_report();
      _exit(code);
    }
    ::close(fds[1]);
    if (pid < 0) {
      ::close(fds[0]);
      return Child{};
    }
    return Child(ChildProcess::adopt(pid), fds[0]);
  }

  /// Forks and execs path with argv (argv[0] included). Descriptors without CLOEXEC are inherited.
  /// Such a child has no link: wait_ready and read_report fail.
  static Child exec(const std::string& path, std::initializer_list<std::string> args) {
    SpawnOptions options;
    options.program = path;
    return Child(ChildProcess(std::vector<std::string>(args), options), -1);
  }

  Child() = default;
  Child(Child&& other) noexcept : process_(std::move(other.process_)), fd_(std::exchange(other.fd_, -1)) {}
  Child& operator=(Child&& other) noexcept {
    if (this != &other) {
      process_ = std::move(other.process_);  // kills and reaps the child this one held
      close_link();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() {
    (void)process_.kill_and_reap();
    close_link();
  }

  [[nodiscard]] bool valid() const noexcept { return process_.valid(); }
  [[nodiscard]] pid_t pid() const noexcept { return process_.pid(); }

  /// Waits for the child's ready() byte.
  [[nodiscard]] bool wait_ready(milliseconds timeout) const noexcept {
    const auto deadline = Clock::now() + timeout;
    char c = 0;
    while (read_exact(fd_, &c, 1, deadline))
      if (c == kReadyByte) return true;
    return false;
  }

  /// Reads the report the child sends as it ends (ready bytes before it are skipped).
  [[nodiscard]] bool read_report(Report& out, milliseconds timeout) const noexcept {
    const auto deadline = Clock::now() + timeout;
    char c = 0;
    while (read_exact(fd_, &c, 1, deadline))
      if (c == kReportByte) return read_exact(fd_, out.data(), sizeof(out), deadline);
    return false;
  }

  /// Reaps the child, waiting at most timeout; past it the child is killed with SIGKILL.
  ExitStatus wait(milliseconds timeout = kChildTimeout) noexcept { return process_.wait(timeout); }

  /// SIGKILL, then reap: afterwards the pid is dead to kill(pid, 0).
  ExitStatus kill_now() noexcept { return process_.kill_and_reap(); }

 private:
  Child(ChildProcess process, int fd) noexcept : process_(std::move(process)), fd_(fd) {}
  void close_link() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  ChildProcess process_;
  int fd_ = -1;
};

/// Holds children at pass() until the parent opens the gate for them: one byte per child.
class StartGate {
 public:
  StartGate() noexcept {
    if (pipe2(fds_, O_CLOEXEC) != 0) fds_[0] = fds_[1] = -1;
  }
  ~StartGate() {
    for (const int fd : fds_)
      if (fd >= 0) ::close(fd);
  }
  StartGate(const StartGate&) = delete;
  StartGate& operator=(const StartGate&) = delete;

  [[nodiscard]] bool valid() const noexcept { return fds_[0] >= 0; }
  /// In a child: blocks until the parent opens the gate (or the timeout passes).
  [[nodiscard]] bool pass(milliseconds timeout = kChildTimeout) const noexcept {
    char c = 0;
    return read_exact(fds_[0], &c, 1, Clock::now() + timeout);
  }
  /// In the parent: lets n children through at once.
  void open(std::size_t n) const noexcept {
    for (std::size_t i = 0; i < n; ++i) (void)write_all(fds_[1], "g", 1);
  }

 private:
  int fds_[2] = {-1, -1};
};

}  // namespace weir::test

#pragma once
// A forked child for the cross-process cases, and the CPUs it and its parent run on. Private to bench/.
#include <sched.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace weir::bench {

/// A forked child and the read end of the pipe it reports through. Killed (SIGKILL) and reaped on
/// every way out that has not seen it exit. Thread: the forking thread only.
class ChildProcess {
 public:
  ChildProcess(pid_t pid, int fd) noexcept : pid_(pid), fd_(fd) {}
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  /// False once the child has exited (reaped here; status says how, as waitpid writes it).
  [[nodiscard]] bool running(int& status) noexcept;
  /// Polls for the child's exit until timeout_ns; false if it still runs (the destructor kills it).
  [[nodiscard]] bool wait_exit(std::int64_t timeout_ns, int& status) noexcept;
  /// Reads exactly n bytes from the pipe within timeout_ns; false on timeout, EOF or error.
  [[nodiscard]] bool read_exact(void* out, std::size_t n, std::int64_t timeout_ns) noexcept;
  /// The child's pid (to signal it), -1 once reaped.
  [[nodiscard]] pid_t pid() const noexcept { return pid_; }

 private:
  pid_t pid_;  // -1 once reaped
  int fd_;
};

/// "reader child exited with 3", "... killed by signal 9" (who: how the child is called).
[[nodiscard]] std::string exit_text(int status, const char* who = "reader child");

/// Where a parent and its forked child run.
enum class Placement : std::uint8_t {
  two_cpus,  // one CPU each, so the two really run at once
  one_cpu,   // both on the same CPU, so every hand-over is a context switch
};

/// Puts this process on the first allowed CPU and, after fork, the child on the second (two_cpus)
/// or the same one (one_cpu): left to the scheduler, a fresh child often time-shares its parent's
/// CPU for milliseconds, or migrates. Restores this process's CPU set when destroyed. Does nothing
/// (pinned() is false) where fewer CPUs than the placement needs are allowed.
/// Thread: the forking thread; pin_child() in the child only.
class CpuPair {
 public:
  explicit CpuPair(Placement placement = Placement::two_cpus) noexcept;
  CpuPair(const CpuPair&) = delete;
  CpuPair& operator=(const CpuPair&) = delete;
  ~CpuPair();

  [[nodiscard]] bool pinned() const noexcept { return pinned_; }
  /// In the child: moves it to the second CPU.
  void pin_child() const noexcept;

 private:
  cpu_set_t original_;
  int first_ = -1;
  int second_ = -1;
  bool pinned_ = false;
};

}  // namespace weir::bench

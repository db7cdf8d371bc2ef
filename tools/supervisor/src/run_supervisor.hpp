#pragma once
// The supervisor of `weir run`: starts each part as a child process (or a thread), forwards its
// output line by line with the part's name, restarts a part that dies with exponential back-off,
// gives up on one that keeps dying (never on an essential one), does not retry one that exits with
// a configuration error (status 2), and stops everything in order: drivers first, so shards and
// recorders drain what was acquired before they are stopped.
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "run_plan.hpp"

namespace weir::supervisor {

inline constexpr std::int64_t kFirstBackoffNs = 200'000'000;     // the first restart waits this long
inline constexpr std::int64_t kMaxBackoffNs = 10'000'000'000;    // and back-off doubles up to this
inline constexpr std::int64_t kHealthyRunNs = 20'000'000'000;    // a part that ran this long starts a new count


/// What a thread part runs: returns its exit code; must return soon after `stop` is set.
using ThreadMain = std::function<int(const std::atomic<bool>& stop)>;

enum class PartStatus : std::uint8_t { running, backoff, finished, given_up, stopped, config_error };
[[nodiscard]] const char* part_status_name(PartStatus status) noexcept;

struct PartState {
  PartPlan plan;
  ThreadMain thread_main;  // set for thread parts
  PartStatus status = PartStatus::backoff;
  pid_t pid = 0;           // a running child
  int out_fd = -1;         // the child's stdout and stderr
  std::string partial;     // output not yet ended by a newline
  std::unique_ptr<std::thread> thread;
  std::unique_ptr<std::atomic<bool>> thread_stop;
  std::unique_ptr<std::atomic<int>> thread_exit;  // -1 while running
  std::unique_ptr<std::atomic<std::int64_t>> thread_cpu_ns;  // the thread's CPU time, stored as it ends
  int restarts = 0;        // over the whole run
  int failures_in_row = 0;
  std::int64_t started_ns = 0;
  std::int64_t next_start_ns = 0;
  std::string last_exit;   // "exit 1", "exit 3 (disk full)", "killed by SIGSEGV"
  int last_exit_code = -1; // its exit status when it last ended; -1 for a signal or a failed start
  double cpu_s = 0;        // user + system CPU of its processes (or threads) that ended (all restarts)
};

class Supervisor {
 public:
  /// `log` receives one line at a time: the supervisor's own and the parts' (prefixed). Process
  /// parts run `weir_exe` (RunOptions::weir_exe).
  Supervisor(std::function<void(const std::string&)> log, std::string weir_exe)
      : log_(std::move(log)), weir_exe_(std::move(weir_exe)) {}
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;
  ~Supervisor();

  /// Starts a part now. A thread part needs `thread_main`.
  void add(PartPlan plan, ThreadMain thread_main = {});
  /// Stops a part (SIGTERM, then SIGKILL after `grace_ns`) and forgets it.
  void remove(const std::string& name, std::int64_t grace_ns);
  /// Forwards output, reaps parts that ended, restarts those due; sleeps up to timeout_ms in poll.
  void tick(int timeout_ms);
  /// Stops every part in order: drivers, then (after `drained` returns) shards, then recorders,
  /// each given grace_ns to leave on SIGTERM before SIGKILL.
  void stop_all(std::int64_t grace_ns, const std::function<void()>& drained = {});
  /// SIGKILL to every child now (a second SIGINT).
  void kill_all() noexcept;

  [[nodiscard]] const std::vector<std::unique_ptr<PartState>>& parts() const noexcept { return parts_; }
  [[nodiscard]] bool any_active() const noexcept;
  /// Called whenever a part starts, ends, is given up or stopped (keys, run records).
  void on_change(std::function<void(const PartState&)> callback) { on_change_ = std::move(callback); }
  /// True once an essential part stopped on a configuration error: the run cannot go on.
  [[nodiscard]] bool essential_failed() const noexcept { return essential_failed_; }

 private:
  void start(PartState& part);
  void joined(PartState& part);
  void ended(PartState& part, const std::string& how, int exit_code);
  void changed(const PartState& part) {
    if (on_change_) on_change_(part);
  }
  void drain_output(PartState& part, bool all);
  void stop_part(PartState& part, std::int64_t grace_ns);
  void say(const std::string& line) { log_(line); }

  std::function<void(const std::string&)> log_;
  std::string weir_exe_;  // what process parts run
  std::vector<std::unique_ptr<PartState>> parts_;
  std::function<void(const PartState&)> on_change_;
  bool stopping_ = false;
  bool essential_failed_ = false;
};

}  // namespace weir::supervisor

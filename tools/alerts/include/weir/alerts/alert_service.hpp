#pragma once
// The alerts of a running pipeline, beside `weir run`'s loop and never in it: an evaluator thread
// reads the arena once a second (AlertEngine), a delivery thread POSTs and runs commands with
// timeouts and retries with back-off. Counted in the arena's keys weir.alert.<name>.sent (notices
// delivered), .failed (attempts that failed) and .firing (subjects firing now); logged through
// take_log(), which the supervisor's loop drains without waiting.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "weir/alerts/alert_engine.hpp"
#include "weir/core/arena.hpp"

namespace weir::alerts {

inline constexpr double kEvaluateEveryS = 1.0;     // the evaluator's period
inline constexpr double kFirstRetryS = 1.0;        // a failed delivery is tried again after this
inline constexpr double kMaxRetryS = 60.0;         // ... doubling up to this
inline constexpr const char* kPassesKey = "weir.alerts.passes";  // u64: evaluation passes so far (the evaluator lives)

class AlertService {
 public:
  /// `default_paths`: the recorders' directories, watched by disk alerts without `paths`.
  /// Requires: `arena` outlives the service.
  AlertService(const core::Arena& arena, const std::vector<config::AlertDecl>& alerts,
               const std::vector<std::string>& default_paths);
  AlertService(const AlertService&) = delete;
  AlertService& operator=(const AlertService&) = delete;
  ~AlertService();  // stop()

  /// Starts both threads; creates the counter keys at 0. Thread: control.
  void start();
  /// Ends both threads: a delivery under way finishes (bounded by its timeout), notices still
  /// queued are logged as not sent. Thread: the one that called start().
  void stop();
  /// Log lines since the last call; empty, without waiting, when a thread holds the lock. Thread: any.
  [[nodiscard]] std::vector<std::string> take_log();

  /// Evaluation passes done (tests and the run summary). Thread: any.
  [[nodiscard]] std::uint64_t passes() const noexcept { return passes_.load(std::memory_order_relaxed); }

 private:
  struct Pending {
    std::size_t alert = 0;
    Notice notice;
    bool webhook_done = false, command_done = false;
    int attempts = 0;
    double next_try_s = 0;
  };
  void evaluate_loop();
  void deliver_loop();
  void deliver(Pending& p);  // one attempt of what is not done yet
  void log(std::string line);
  void count(std::size_t alert, const char* what);

  const core::Arena& arena_;
  std::vector<config::AlertDecl> alerts_;
  AlertEngine engine_;
  std::vector<std::string> paths_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> passes_{0};
  std::mutex mutex_;               // guards queue_, log_
  std::condition_variable wake_;   // the evaluator queued a notice, or stop
  std::deque<Pending> queue_;
  std::vector<std::string> log_;
  std::thread evaluator_, deliverer_;
};

}  // namespace weir::alerts

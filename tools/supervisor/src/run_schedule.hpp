#pragma once
// The pipeline's own door into its runs (`schedule = {...}` in the arena of a pipeline with controlled
// runs): a thread of `weir run` that starts a run when the pipeline starts, stops each run after a time
// or after exactly a number of blocks of a channel, and starts the next one (MIDAS's auto-restart,
// areaDetector's NumCapture). Its limits apply to every run, whichever door started it.
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "weir/config/pipeline.hpp"
#include "weir/core/arena.hpp"

namespace weir::supervisor {

class RunSchedule {
 public:
  /// `channel`: the channel stop_after_blocks counts (the schedule's, or the pipeline's first).
  RunSchedule(const core::Arena& arena, config::RunScheduleDecl decl, std::string channel,
              std::function<void(const std::string&)> log);
  RunSchedule(const RunSchedule&) = delete;
  RunSchedule& operator=(const RunSchedule&) = delete;
  ~RunSchedule();  // stop()

  void start();
  /// Ends the thread (a stop under way finishes first). Thread: the one that called start().
  void stop();
  [[nodiscard]] std::uint64_t runs_started() const noexcept { return started_.load(std::memory_order_relaxed); }

 private:
  void loop();
  const core::Arena& arena_;
  config::RunScheduleDecl decl_;
  std::string channel_;
  std::function<void(const std::string&)> log_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> started_{0};
  std::thread thread_;
};

}  // namespace weir::supervisor

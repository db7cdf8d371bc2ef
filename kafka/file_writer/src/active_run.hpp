#pragma once
// One run of the file-writer: its own arena, the gates from the staging arena into it on one
// thread, the recorder on it on another.
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "weir/core/arena.hpp"
#include "weir/kafka_file_writer/file_writer.hpp"
#include "weir/kafka_file_writer/run_gate.hpp"

namespace weir::kafka::fw {

class ActiveRun {
 public:
  /// Makes the run's arena, a gate for every channel the staging arena has, and starts the recorder
  /// (`record`, its out the run's file) and the gates; returns once the recorder's first file is
  /// open. `report` names the run (job, run name, window start). `notice` (non-empty, callable
  /// from any thread) gets the recorder's lines and a gate that cannot open. Fails naming why: the
  /// arena, or the recorder's start (an unwritable --out, a run still written by another recorder).
  [[nodiscard]] static core::Result<std::unique_ptr<ActiveRun>> start(const core::Arena& staging,
                                                                      const FileWriterOptions& options,
                                                                      const rec::RecordOptions& record,
                                                                      RunReport report, const Notice& notice);
  ActiveRun(const ActiveRun&) = delete;
  ActiveRun& operator=(const ActiveRun&) = delete;
  ~ActiveRun();

  /// Sets the window's stop (data time, ns since the epoch) and the wall-clock time after which
  /// sources still behind it are waited for no longer. Thread: the owner's.
  void stop_at(std::int64_t stop_ns, std::int64_t deadline_ns) noexcept;
  [[nodiscard]] const std::string& job_id() const noexcept { return report_.job_id; }
  [[nodiscard]] std::int64_t stop_ns() const noexcept { return stop_ns_.load(std::memory_order_relaxed); }
  /// Whether the gates and the recorder are done. Thread: the owner's.
  [[nodiscard]] bool done() const noexcept { return done_.load(std::memory_order_acquire); }
  /// Joins the threads and returns the run's report. Thread: the owner's.
  RunReport finish();

 private:
  ActiveRun(core::Arena arena, const core::Arena& staging, const FileWriterOptions& options, RunReport report,
            Notice notice);
  void gate_loop(std::vector<RunGate> gates);
  void open_new_gates(std::vector<RunGate>& gates);

  core::Arena arena_;
  const core::Arena& staging_;
  const FileWriterOptions& options_;
  RunReport report_;
  Notice notice_;
  rec::RecordControl control_;
  std::atomic<std::int64_t> stop_ns_{kOpenStop};
  std::atomic<std::int64_t> deadline_ns_{kOpenStop};  // CLOCK_REALTIME
  std::atomic<bool> recorder_ended_{false};
  std::atomic<bool> done_{false};
  std::optional<core::Result<rec::RecordSummary>> summary_;
  std::thread recorder_, gate_;
};

}  // namespace weir::kafka::fw

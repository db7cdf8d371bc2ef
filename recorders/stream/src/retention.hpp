#pragma once
// The retention thread (weir/recorder/retention.hpp; docs/design/recording.md, "Retention"): looks at
// the output's free space and the recorder's files every kRetentionPeriodMs, and at once when the
// recording thread pokes it (a file closed, free space low), and deletes what plan_retention picks:
// each deletion written into its run's record first, then the file, its manifest and its hand-off
// marker unlinked and the directory fsynced. The recording thread only pokes it and reads counters.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>

#include "weir/recorder/naming.hpp"
#include "weir/recorder/retention.hpp"

namespace weir::rec {

/// Relaxed atomics: only displayed (keys, /metrics) and read for the alarm. One set per recorder process
/// (retention_counters()): a controlled recorder's threads of successive runs count on, as counters must.
struct RetentionCounters {
  std::atomic<std::uint64_t> deleted_files{0};
  std::atomic<std::uint64_t> deleted_bytes{0};
  std::atomic<std::uint64_t> failures{0};   // a deletion (or its record) that failed; the file stays
  std::atomic<std::uint64_t> kept_back{0};  // at the last look: files retention would take but may not
  std::atomic<std::uint64_t> blocked{0};    // 1 while free space is below free_gib and nothing more may go
  std::atomic<std::uint64_t> passes{0};     // looks at the disk
};

/// The process's retention counters. Thread: any.
[[nodiscard]] RetentionCounters& retention_counters() noexcept;

struct RetentionSetup {
  OutTarget target;
  std::string arena;          // DIR form: only files named for this arena are the recorder's
  std::uint64_t own_run = 0;  // the open run: never touched
  KeepOptions keep;
  bool handoff_required = false;
  std::string part;           // named in the deletion records ("record" when empty)
};

class Retention {
 public:
  Retention(RetentionSetup setup, std::function<void(std::string_view)> notice);
  Retention(const Retention&) = delete;
  Retention& operator=(const Retention&) = delete;
  ~Retention();

  /// Look now (a file closed; free space low). Cold path: a lock and a notify. Thread: any.
  void poke();
  /// Stops the thread after the pass in progress. Thread: the recording thread.
  void finish();
  [[nodiscard]] const RetentionCounters& counters() const noexcept { return counters_; }

 private:
  void work();
  void pass();
  [[nodiscard]] bool run_finished(std::uint64_t run);
  [[nodiscard]] bool remove(const KeptFile& file, DeleteReason reason, std::uint64_t free_bytes);

  RetentionSetup setup_;
  std::string prefix_;  // of the run records: the arena (DIR form) or the stem
  std::function<void(std::string_view)> notice_;
  RetentionCounters& counters_;
  std::set<std::uint64_t> finished_;  // runs whose record says they stopped (only this thread)
  std::mutex mutex_;
  std::condition_variable wake_;
  bool poked_ = false;     // guarded by mutex_
  bool stopping_ = false;  // guarded by mutex_
  std::thread thread_;
};

}  // namespace weir::rec

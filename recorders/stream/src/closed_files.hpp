#pragma once
// What happens to a file after it closes, off the recording thread (docs/design/recording.md,
// "Checksums" and "Hand-off"): one thread of its own hashes each closed file (SHA-256) into its
// manifest FILE.sha256, then, when an `on_close` command is declared, runs it for the file in a
// process of its own (its own process group, killed when it outlives its timeout), retrying a
// failure with exponential back-off while later files go on; a success is recorded once, durably,
// as FILE.handed. The recording thread only hands names over (a lock and a queue push at a rotation,
// never per block) and reads the counters.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "weir/recorder/recorder.hpp"

namespace weir::rec {

/// Counters of the closed-file thread; relaxed atomics: they are only displayed (keys, /metrics).
struct ClosedFileCounters {
  std::atomic<std::uint64_t> hashed_files{0};
  std::atomic<std::uint64_t> hashed_bytes{0};
  std::atomic<std::uint64_t> hash_failures{0};   // a file or its manifest could not be read or written
  std::atomic<std::uint64_t> hash_ns{0};         // time spent hashing and writing manifests
  std::atomic<std::uint64_t> handoff_ok{0};      // hand-offs recorded as done (FILE.handed written)
  std::atomic<std::uint64_t> handoff_failures{0};  // attempts that failed (non-zero exit, a signal, no exec)
  std::atomic<std::uint64_t> handoff_timeouts{0};  // of those: killed at their timeout
  std::atomic<std::uint64_t> handoff_pending{0};   // files waiting for a (first or next) attempt
};

class ClosedFiles {
 public:
  /// run: written into each manifest. notice: one line per event (any thread).
  ClosedFiles(std::uint64_t run, bool checksums, const HandoffOptions& handoff, std::function<void(std::string_view)> notice);
  ClosedFiles(const ClosedFiles&) = delete;
  ClosedFiles& operator=(const ClosedFiles&) = delete;
  ~ClosedFiles();

  /// A closed file under its final name: hashed unless it has a manifest already (`hash` false: a file
  /// of an earlier recorder, found at start), then handed over unless it was. `run`: the run its
  /// manifest names (0: this recorder's). Cold path.
  /// Thread: the recording thread, or the sync thread (once the file is on the disk).
  void add(std::string file, bool hash = true, std::uint64_t run = 0);
  /// Stops taking files; waits for every hash, for a hand-off in progress and for one attempt at each
  /// file whose hand-off is due, at most until `deadline_ns` (monotonic) for the hand-offs. Files
  /// still not handed over stay without FILE.handed: the run's next recorder retries them.
  /// Thread: the recording thread.
  void finish(std::int64_t deadline_ns);
  [[nodiscard]] const ClosedFileCounters& counters() const noexcept { return counters_; }

 private:
  struct Item {
    std::string file;
    std::uint64_t run = 0;  // 0: run_
    bool hash = true;
    bool hashed = false;
    std::uint64_t attempts = 0;
    std::int64_t due_ns = 0;  // monotonic: the next hand-off attempt
  };
  void work();
  void hash(Item& item);
  [[nodiscard]] bool hand_over(Item& item);  // one attempt; true on success (marker written)

  std::uint64_t run_;
  bool checksums_;
  HandoffOptions handoff_;
  std::function<void(std::string_view)> notice_;
  ClosedFileCounters counters_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Item> items_;           // guarded by mutex_
  bool stopping_ = false;            // guarded by mutex_
  std::int64_t stop_deadline_ns_ = 0;  // guarded by mutex_
  std::thread thread_;
};

}  // namespace weir::rec

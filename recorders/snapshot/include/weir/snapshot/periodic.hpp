#pragma once
// Snapshots on a period, into numbered files that are never overwritten: for a recorder that
// keeps the arena's state beside its stream (`weir record --every`) and for `weir snapshot DIR/`.
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "weir/core/arena.hpp"
#include "weir/core/error.hpp"
#include "weir/snapshot/snapshot.hpp"

namespace weir::rec {

inline constexpr std::uint32_t kSnapshotNumberDigits = 6;         // DIR/<arena>_snap<NNNNNN>.h5
inline constexpr std::int64_t kPeriodicStopPollNs = 100'000'000;  // a periodic wait looks at its stop flag this often

/// The path of snapshot `number` of arena `arena_name` in `dir`: "DIR/NAME_snap000042.h5".
[[nodiscard]] std::string numbered_snapshot_path(const std::string& dir, const std::string& arena_name,
                                                 std::uint64_t number);

/// One more than the highest number of NAME_snap<N>.h5 in dir (1 when there is none). Thread: any.
[[nodiscard]] core::Result<std::uint64_t> next_snapshot_number(const std::string& dir, const std::string& arena_name);

/// One snapshot a schedule wrote.
struct PeriodicShot {
  std::string path;
  std::uint64_t number = 0;
  SnapshotStats stats;
};

/// A snapshot every `every_ns` on CLOCK_MONOTONIC absolute deadlines (start, start + every, ...).
/// A snapshot that overruns its period makes the schedule skip the deadlines it missed (counted),
/// never queue them. An agent: the caller's loop calls poll() with the current time; nothing here
/// sleeps or starts threads. Thread: one thread at a time.
class SnapshotSchedule {
 public:
  /// Checks that dir is a writable directory and every_ns is positive; the first snapshot is due at
  /// once. Fails naming the directory.
  [[nodiscard]] static core::Result<SnapshotSchedule> create(std::string dir, std::string arena_name,
                                                             std::int64_t every_ns, SnapshotOptions options = {});

  /// Writes the next numbered file if one is due at now_ns (CLOCK_MONOTONIC) and returns it; returns
  /// an empty PeriodicShot (number 0) when none is due. A failed snapshot returns its error and the
  /// schedule moves on to the next period, so a full disk does not stop later attempts.
  [[nodiscard]] core::Result<PeriodicShot> poll(const core::Arena& arena, std::int64_t now_ns);

  /// CLOCK_MONOTONIC time of the next snapshot.
  [[nodiscard]] std::int64_t next_due_ns() const noexcept { return next_due_ns_; }
  /// Deadlines skipped because a snapshot ran past them.
  [[nodiscard]] std::uint64_t missed() const noexcept { return missed_; }

 private:
  SnapshotSchedule(std::string dir, std::string arena_name, std::int64_t every_ns, SnapshotOptions options) noexcept;

  std::string dir_;
  std::string arena_name_;
  std::int64_t every_ns_ = 0;
  SnapshotOptions options_;
  std::int64_t next_due_ns_ = 0;  // 0: not started; the first poll is due
  std::uint64_t missed_ = 0;
};

struct PeriodicOptions {
  std::string dir;
  std::int64_t every_ns = 0;
  std::uint64_t max_files = 0;  // stop after this many snapshots (0: until stop)
  SnapshotOptions snapshot;
};

struct PeriodicReport {
  std::uint64_t files = 0;     // snapshots written
  std::uint64_t failures = 0;  // snapshots that failed (each reported to on_error)
  std::uint64_t missed = 0;    // deadlines skipped because a snapshot overran its period
  std::string first_path, last_path;
  bool stopped = false;  // ended by `stop` rather than max_files
};

/// Runs a SnapshotSchedule until `stop` (looked at least every kPeriodicStopPollNs) or max_files,
/// sleeping until each deadline. Calls on_file after each snapshot and on_error after each failure
/// (either may be empty). Fails only when the schedule cannot start (bad directory or period).
/// Thread: any one thread; `stop` may be set from any thread or a signal handler.
[[nodiscard]] core::Result<PeriodicReport> run_periodic_snapshots(
    const core::Arena& arena, const PeriodicOptions& options, const std::atomic<bool>& stop,
    const std::function<void(const PeriodicShot&)>& on_file = {},
    const std::function<void(const core::Error&)>& on_error = {});

}  // namespace weir::rec

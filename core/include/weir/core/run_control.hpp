#pragma once
// The arena's run state machine (docs/design/runs.md): idle -> running -> idle, with a run number,
// its metadata and the door that made each transition. It lives in the arena header
// (RunControlBlock), so every process that has the arena open sees the same run. Transitions are
// serialized by the block's seqlock word: two doors starting at once make one run, and the other is
// refused naming it. Run numbers come from an allocator the caller passes (the recordings' directory
// persists them: weir/ledger/run_numbers.hpp); this module keeps them monotonic within the arena.
// Recorders that take part in controlled runs hold a row each, so a stop can wait for their files.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "weir/core/arena.hpp"
#include "weir/core/arena_layout.hpp"
#include "weir/core/error.hpp"

namespace weir::core {

enum class RunState : std::uint32_t { idle = 0, running = 1 };
/// How the last run ended: stopped (its data kept, the normal end), aborted (an operator's "this run
/// is no good": its files are kept and flagged), interrupted (its door died with it: the run log's word
/// for a run closed at the next start, never a transition).
enum class RunEnd : std::uint32_t { none = 0, stopped = 1, aborted = 2, interrupted = 3 };

[[nodiscard]] std::string_view run_state_name(RunState state) noexcept;  // "idle", "running"
[[nodiscard]] std::string_view run_end_name(RunEnd end) noexcept;        // "", "stopped", "aborted", "interrupted"

/// What an operator says about a run. Each field is UTF-8 text of at most its kRun*Bytes limit.
struct RunMeta {
  std::string title;
  std::string operator_name;
  std::string sample;
  std::string comment;
};

/// Refuses metadata that is not valid UTF-8, holds a NUL or a control character other than tab and
/// newline, or is longer than its field's limit (kRunTitleBytes, ...), naming the field, its length
/// and the limit. Thread: any.
[[nodiscard]] Result<void> check_run_meta(const RunMeta& meta);

/// A consistent copy of the run control.
struct RunStatus {
  RunState state = RunState::idle;
  std::uint64_t number = 0;       // the running run, or the last one (0: none yet)
  std::uint64_t highest = 0;      // the highest number ever started in this arena
  std::int64_t start_ns = 0;      // CLOCK_REALTIME
  std::int64_t stop_ns = 0;       // of the last stop: while a run runs, the previous run's (0: none)
  RunEnd ended = RunEnd::none;    // of the last run, once idle
  std::uint64_t transitions = 0;
  std::uint32_t changes = 0;      // the futex word: pass it to RunControl::wait
  std::string door;               // who made the last transition
  RunMeta meta;
  std::string dir;                // where run numbers are persisted ("" until set)
};

/// A recorder's row, as seen.
struct RunRecorderSeen {
  std::uint32_t row = 0;
  std::uint32_t pid = 0;
  bool alive = false;
  std::uint64_t open_run = 0, closed_run = 0;
  std::int64_t first_block_ns = 0, closed_ns = 0;
};

/// Allocates the number of a new run under the transition lock: given the highest number the arena
/// has seen, returns the number to use (or fails, and the start is refused with its error).
using RunNumberAllocator = std::function<Result<std::uint64_t>(std::uint64_t highest_in_arena)>;

class RunControl {
 public:
  /// Requires: the arena stays mapped while this object is used.
  explicit RunControl(const Arena& arena) noexcept;

  /// Thread: any; processes: any. Never blocks for long (a seqlock read, retried).
  [[nodiscard]] RunStatus status() const;

  /// idle -> running. Refuses (Errc::conflict) a start while a run is running, naming it and the door that
  /// started it; refuses bad metadata; calls `allocate` under the lock and refuses a number not above
  /// every number the arena has seen. Returns the status this transition made (not a later one). Waits at most kRunLockWaitNs for another
  /// transition to finish (one whose holder died is taken over).
  [[nodiscard]] Result<RunStatus> start(const RunMeta& meta, std::string_view door, const RunNumberAllocator& allocate);

  /// running -> idle, ending the run `how` (stopped or aborted). Refuses (Errc::conflict) when idle, and
  /// when `expect` is not 0 and another run is running (a door that stops only the run it saw). The stop
  /// time is now, or `at_ns` when not 0: between the run's start and kRunStopAheadNs from now. A stop
  /// ahead (a schedule ending a run after a number of blocks) is idle at once, and the recorders record
  /// the run's blocks up to that time; the next run starts no earlier.
  [[nodiscard]] Result<RunStatus> stop(std::string_view door, RunEnd how, std::uint64_t expect = 0,
                                       std::int64_t at_ns = 0);

  /// Sets the directory run numbers are persisted in. Refuses another directory than the one set
  /// while a run is running. Thread: any.
  [[nodiscard]] Result<void> set_dir(std::string_view dir);

  /// The change counter (RunStatus::changes) alone: one load, for a loop that looks every turn.
  [[nodiscard]] std::uint32_t changes() const noexcept;

  /// Sleeps until a transition after `seen` (RunStatus::changes) or `timeout_ns`; returns the changes
  /// counter now. Thread: any. Never longer than timeout_ns.
  std::uint32_t wait(std::uint32_t seen, std::int64_t timeout_ns) const noexcept;

  /// A recorder row for this process (reusing one whose process is gone). Fails (Errc::full) when
  /// kRunRecorderRows live recorders hold them all.
  [[nodiscard]] Result<std::uint32_t> join_recorder() const;
  void leave_recorder(std::uint32_t row) const noexcept;
  /// The row's recorder has run `number`'s files open, and recorded its first block at `first_block_ns`
  /// (0: not yet).
  void recorder_open(std::uint32_t row, std::uint64_t number, std::int64_t first_block_ns) const noexcept;
  /// The row's recorder closed (and synced, by its policy) run `number`'s files.
  void recorder_closed(std::uint32_t row, std::uint64_t number) const noexcept;
  /// Every row in use.
  [[nodiscard]] std::vector<RunRecorderSeen> recorders() const;

 private:
  [[nodiscard]] Result<std::uint64_t> lock() const;  // the claimed word
  void unlock(std::uint64_t claimed) const noexcept;
  RunControlBlock* block_;
};

inline constexpr std::int64_t kRunLockWaitNs = 2'000'000'000;  // a transition waits this long for another
inline constexpr std::int64_t kRunStopAheadNs = 60'000'000'000;  // a stop may be set at most this far ahead

}  // namespace weir::core

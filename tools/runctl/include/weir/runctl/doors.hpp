#pragma once
// What every door into an arena's runs does (docs/design/runs.md). A door is a name for the log
// ("cli", "http", "kafka", "schedule", "restart"); the state itself is core::RunControl's.
//
// The run directory (core::RunStatus::dir, set by enable()) keeps, for the arena's name as prefix,
// the run numbers handed out and the run log (weir/ledger/run_log.hpp). A start hands out the next
// number there and writes the run's row as "running" under the arena's transition lock; a stop (or
// abort) waits for every live recorder to close the run's files, audits them and rewrites the row with
// how the run ended and its ledger.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "weir/core/arena.hpp"
#include "weir/core/error.hpp"
#include "weir/core/run_control.hpp"
#include "weir/ledger/run_log.hpp"

namespace weir::runctl {

inline constexpr std::int64_t kDefaultCloseWaitNs = 30'000'000'000;  // a stop waits this long for the recorders

/// Sets the directory where the arena's run numbers and run log are kept (created when missing).
/// Refuses another directory while a run is running. Thread: any.
[[nodiscard]] core::Result<void> enable(const core::Arena& arena, const std::filesystem::path& dir);

/// Starts a run from `door`: refuses when controlled runs are not enabled (no run directory), when a
/// run is running (naming it), bad metadata, or a `wanted` number (0: the next) already used. Returns
/// the new status. Thread: any.
[[nodiscard]] core::Result<core::RunStatus> start_run(const core::Arena& arena, const core::RunMeta& meta,
                                                      std::string_view door, std::uint64_t wanted = 0);

/// What a stop returns: the status right after it and the run's row once its files were closed.
struct Stopped {
  core::RunStatus status;
  ledger::RunLogRow row;
  bool closed = true;  // every live recorder closed the run's files within the wait
  std::vector<std::uint32_t> late;  // pids of recorders that had not closed them when the wait ran out
};

/// Stops (`how` stopped) or aborts the running run (only run `expect` when not 0; at `at_ns` when not 0:
/// core::RunControl::stop), then close_run().
/// Thread: any.
[[nodiscard]] core::Result<Stopped> stop_run(const core::Arena& arena, std::string_view door, core::RunEnd how,
                                             std::uint64_t expect = 0, std::int64_t wait_ns = kDefaultCloseWaitNs,
                                             std::int64_t at_ns = 0);

/// For a run that has just ended (`ended`: the status after its stop): waits until every live
/// recorder of the arena has closed its files (or wait_ns), then writes its row to the run log
/// (ended, the door, times, metadata, files and blocks from the audit). A row already closed stays
/// as it is. Thread: one per process (the audit reads HDF5).
[[nodiscard]] core::Result<Stopped> close_run(const core::Arena& arena, const core::RunStatus& ended,
                                              std::int64_t wait_ns = kDefaultCloseWaitNs);

/// Rows of `dir`'s run log for `prefix` still "running" whose run is not `running_now` (0: none): their
/// door died with them. Each is closed as interrupted, with `note` and the ledger of what its files
/// hold. Returns their numbers. Thread: one per process.
[[nodiscard]] core::Result<std::vector<std::uint64_t>> close_interrupted(const std::filesystem::path& dir,
                                                                          std::string_view prefix,
                                                                          std::uint64_t running_now,
                                                                          const std::string& note);

/// Keys of the last run whose files were audited as it closed (u64; /metrics shows them as
/// weir_run_last_closed_number and weir_run_last_closed_exact): its number, and 1 when its audit
/// balanced (nothing unaccounted or duplicated), 0 when not.
inline constexpr const char* kClosedRunKey = "weir.run.closed.number";
inline constexpr const char* kClosedExactKey = "weir.run.closed.exact";

/// Leaves run `run`'s audit verdict in the arena's keys (kClosedRunKey, kClosedExactKey). A full key
/// table leaves them out. Thread: any.
void publish_closed(const core::Arena& arena, std::uint64_t run, bool exact) noexcept;

/// One line for people: "run 12 stopped: 3 files, 4000 blocks written, 4000 recorded, 0 lost (exact)".
[[nodiscard]] std::string ledger_line(const ledger::RunLogRow& row);

}  // namespace weir::runctl

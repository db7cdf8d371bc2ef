#pragma once
// The audit: a run's files read alone (no arena needed), every block of every channel accounted
// for. For each channel, over the run's sequence range [first, end): each block is in the files
// exactly once, or in a gap row with its reason; what is in neither is unaccounted, what is in
// more than one place is duplicated. `weir audit RUN_DIR` prints it; `weir run`'s summary and
// every "missing"/"lost" figure come from it.
#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "weir/core/error.hpp"
#include "weir/core/gap_reason.hpp"
#include "weir/ledger/run_record.hpp"

namespace weir::ledger {

inline constexpr std::size_t kReasonCount = core::kGapReasonCount;  // every gap reason of the format

/// One channel's ledger over one run. Invariant: recorded + the gaps of every reason but
/// dropped_at_source + deleted + unaccounted == end - first.
///
/// first is the run record's first_sequence, lowered to the lowest sequence the files hold when
/// they hold one below it; end is max(one past the highest sequence the files account for, the
/// record's written). A channel whose files come from several arena incarnations (the arena was
/// re-created: its sequences start again) has one sequence space per incarnation; they are laid
/// end to end: first is the first incarnation's, end - first the sum of their lengths.
struct ChannelLedger {
  std::string channel;
  std::uint64_t first = 0;        // first sequence the run answers for
  std::uint64_t end = 0;          // one past the last (the run record's final `written` when known)
  std::uint64_t written = 0;      // blocks the source wrote in [first, end), plus those it dropped at the source
  std::uint64_t recorded = 0;     // distinct blocks with data in the files (gap-flagged rows: their flags' reason)
  std::uint64_t duplicates = 0;   // distinct blocks present more than once (recorded twice, recorded and in a
                                  // gap row, or in two gap rows)
  std::array<std::uint64_t, kReasonCount> gaps{};  // blocks by gap reason (h5::GapReason order)
  std::uint64_t unaccounted = 0;  // blocks in [first, end) in no file and no gap row
  std::uint64_t deleted = 0;      // blocks in files retention deleted (the run record's `deleted`): the
                                  // stretches between the remaining files where a deleted segment was
  std::uint64_t tail = 0;         // of the gaps: blocks past the files' last accounted block up to the record's
                                  // written (under the recorded fault's reason, else recorder_down)
  std::uint64_t durable = 0;      // blocks in files closed before the record's synced_ns (best effort: a
                                  // file's stop_ns against the last completed fsync; 0 without a record)
  std::uint64_t incarnations = 0;  // arena incarnations the channel's sequences come from
};

/// One file of the run, as the audit found it.
struct FileState {
  std::filesystem::path path;
  std::uint64_t segment = 0;
  std::string state;              // "closed" (stop_time set), "repaired" (no stop_time, no SWMR marks),
                                  // "swmr-marked" (a killed recorder's marks: run `weir repair`),
                                  // "unreadable" (with `error`), "deleted" (by retention: the run
                                  // record says so and the file is gone; `error` says why and when)
  std::string error;
  std::uint64_t blocks = 0;       // over its channels
  bool partial = false;           // named NAME.partial: not closed yet (its recorder runs, or was killed)
};

struct Audit {
  std::uint64_t run = 0;
  std::string arena;
  std::vector<FileState> files;   // in segment order
  std::vector<ChannelLedger> channels;
  std::optional<RunRecord> record;  // the run record beside the files, when there is one
  /// True when nothing is duplicated or unaccounted and every file could be read.
  [[nodiscard]] bool exact() const noexcept;
};

struct AuditOptions {
  std::uint64_t run = 0;          // 0: the only run in the directory (refused when there are several)
  std::string arena;              // "": the only arena in the directory
};

/// Audits the run's files in `dir` (a directory, or one FILE.h5 of a FILE-form series). Fails,
/// naming the directory, when it holds no recording (or several runs and none was chosen).
/// Thread: one per process (serial HDF5).
[[nodiscard]] core::Result<Audit> audit_run(const std::filesystem::path& dir, const AuditOptions& options = {});

/// Blocks lost in the ledger: every gap reason except the recorder_restart marker, plus unaccounted
/// (blocks in files retention deleted are not lost: they were kept, then let go on purpose).
[[nodiscard]] std::uint64_t lost_blocks(const ChannelLedger& ledger) noexcept;

}  // namespace weir::ledger

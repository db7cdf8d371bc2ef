#pragma once
// The runs of a recording directory (docs/design/runs.md): the run numbers handed out for an arena,
// persisted beside its recordings so no number is ever used twice (across crashes and restarts of
// anything), and the run log, one line per run, that pandas and `weir runs ls` read.
//
//   <dir>/<prefix>.run-numbers   "weir-run-numbers 1\nlast N\n": the last number handed out
//   <dir>/<prefix>_runs.csv      the run log: a header line, then one row per run (RFC 4180 CSV)
//
// Both are rewritten whole and durably (a temporary file, fsync, rename, fsync of the directory)
// under an flock on "<file>.lock", so several doors and recorders may write them.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "weir/core/error.hpp"

namespace weir::ledger {

inline constexpr char kRunNumbersSuffix[] = ".run-numbers";
inline constexpr char kRunLogSuffix[] = "_runs.csv";
inline constexpr char kRunning[] = "running";  // RunLogRow::ended of a run that has not ended

/// <dir>/<prefix>.run-numbers. Thread: any.
[[nodiscard]] std::filesystem::path run_numbers_path(const std::filesystem::path& dir, std::string_view prefix);
/// <dir>/<prefix>_runs.csv. Thread: any.
[[nodiscard]] std::filesystem::path run_log_path(const std::filesystem::path& dir, std::string_view prefix);

/// The highest run number `dir` knows for `prefix`: the numbers file, recordings and run records named
/// <prefix>_run<N>..., and the run log's rows. 0 when none. Fails naming an unreadable numbers file.
[[nodiscard]] core::Result<std::uint64_t> highest_run(const std::filesystem::path& dir, std::string_view prefix);

/// Hands out the next run number for `prefix` in `dir` (created when missing) and persists it before
/// returning: one above every number known there and above `floor` (the arena's own highest), or
/// `wanted` when it is not 0 and above them all. Refuses a `wanted` at or below them, naming the
/// highest. Thread: any; processes: any, serialized by the lock.
[[nodiscard]] core::Result<std::uint64_t> allocate_run_number(const std::filesystem::path& dir, std::string_view prefix,
                                                              std::uint64_t wanted = 0, std::uint64_t floor = 0);

/// One row of the run log.
struct RunLogRow {
  std::uint64_t run = 0;
  std::int64_t start_ns = 0, stop_ns = 0;  // CLOCK_REALTIME; written as ISO 8601 UTC with nanoseconds
  std::string title, operator_name, sample;
  std::uint64_t files = 0;                 // recording files of the run
  std::uint64_t blocks_written = 0;        // by the sources, over the run's sequence ranges
  std::uint64_t blocks_recorded = 0;       // in the files
  std::uint64_t blocks_lost = 0;           // every gap but restart markers, plus unaccounted
  std::string ended;                       // "running" until it ends; "stopped", "aborted", "interrupted"
  std::string door;                        // the door that ended it ("cli", "http", "kafka", "schedule", "restart")
  std::string note;                        // why, for a run that did not end cleanly; "" otherwise
  bool exact = true;                       // the run's audit balanced (nothing unaccounted or duplicated)
};

/// The column names, in order: run,start,stop,title,operator,sample,files,blocks_written,
/// blocks_recorded,blocks_lost,exact,ended,door,note.
[[nodiscard]] std::string_view run_log_header() noexcept;

/// Fills row's files, block counts and `exact` from the audit of run row.run's files in `dir` (the
/// arena `prefix`). A run with no files at all leaves zeros (and exact). Thread: one per process (HDF5).
[[nodiscard]] core::Result<void> fill_from_audit(const std::filesystem::path& dir, std::string_view prefix, RunLogRow& row);

/// The rows of a run log, in file order; empty when the file does not exist. Fails naming the file
/// and line of a row it cannot read.
[[nodiscard]] core::Result<std::vector<RunLogRow>> read_run_log(const std::filesystem::path& path);

/// Adds the row for row.run, keeping the rows ordered by run, or replaces the row for that run while
/// it is still "running". A row of an ended run is kept and false is returned (the first to close a run
/// writes its row). Thread: any; processes: any.
[[nodiscard]] core::Result<bool> add_run_log_row(const std::filesystem::path& path, const RunLogRow& row);

/// A stretch of a channel's blocks that no run answers for: published between two runs of the same
/// arena incarnation (controlled runs), so in no run's files and lost by none.
struct BetweenRuns {
  std::string channel;
  std::uint64_t after_run = 0, before_run = 0;  // the runs on either side
  std::uint64_t first = 0, end = 0;             // sequences [first, end)
  [[nodiscard]] std::uint64_t blocks() const noexcept { return end > first ? end - first : 0; }
};

/// The run numbers of `prefix` in `dir` that have a run record, ascending. Thread: any.
[[nodiscard]] std::vector<std::uint64_t> recorded_runs(const std::filesystem::path& dir, std::string_view prefix);

/// Every stretch between consecutive runs of `prefix` in `dir`, per channel, from the runs' records
/// (each channel's first_sequence and final written), within one arena incarnation. Fails naming a
/// record that cannot be read, and refuses two runs whose ranges overlap (a block in two runs).
[[nodiscard]] core::Result<std::vector<BetweenRuns>> between_runs(const std::filesystem::path& dir, std::string_view prefix);

/// The run log's time text, "2026-12-06T05:12:00.123456789Z" (UTC; "" for 0), as nanoseconds since the
/// epoch (0 for ""); fails naming the text otherwise.
[[nodiscard]] core::Result<std::int64_t> parse_iso_time(std::string_view text);

}  // namespace weir::ledger

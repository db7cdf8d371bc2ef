#pragma once
// Retention (docs/design/recording.md, "Retention"): a recorder that keeps its disk within limits by
// deleting the oldest closed files of finished runs, never a file of the open run, never one whose
// hand-off has not succeeded (when one is declared and `after` is handed_over), never a file it did
// not name. Each deletion is written into its run's record before the file goes, so `weir audit`
// names it deleted, not missing. This header holds the options and the choice, a pure function
// tested on a made-up listing; the thread that looks at the disk and deletes is the recorder's
// (src/retention.hpp).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weir/core/error.hpp"

namespace weir::rec {

/// Which closed files retention may take.
enum class KeepAfter : std::uint8_t {
  closed,       // any closed file of a finished run
  handed_over,  // only once its on_close hand-off succeeded (FILE.handed): the default with on_close
};
[[nodiscard]] std::string_view keep_after_name(KeepAfter after) noexcept;
/// "closed" or "handed_over"; fails naming the text and the two otherwise.
[[nodiscard]] core::Result<KeepAfter> parse_keep_after(std::string_view text);

/// `keep = { free_gib = 50, max_gib = 2000, max_age_days = 30, after = "handed_over" }`. A limit of
/// 0 is no limit; fractions of a GiB are fine.
struct KeepOptions {
  double free_gib = 0;       // delete while the disk has less free than this
  double max_gib = 0;        // delete while the recorder's files in --out total more than this
  double max_age_days = 0;   // delete files closed longer ago than this
  std::optional<KeepAfter> after;  // nullopt: handed_over when an on_close is declared, else closed
  [[nodiscard]] bool enabled() const noexcept { return free_gib > 0 || max_gib > 0 || max_age_days > 0; }
};

/// Why a file was deleted; the names are those of the log lines and the run record.
enum class DeleteReason : std::uint8_t {
  free_space,  // the disk had less free than free_gib
  max_total,   // the recorder's files totalled more than max_gib
  max_age,     // closed longer ago than max_age_days
};
[[nodiscard]] std::string_view delete_reason_name(DeleteReason reason) noexcept;

/// One file of the recorder's, as retention sees it.
struct KeptFile {
  std::string path;
  std::uint64_t run = 0;
  std::uint64_t segment = 0;
  std::uint64_t bytes = 0;
  std::int64_t closed_ns = 0;  // CLOCK_REALTIME of its last change (its close)
  bool open_run = false;       // of a run that has not finished (the recorder's own, or one whose record has no stop)
  bool handed = false;         // FILE.handed is there
};

struct DeleteChoice {
  std::size_t index = 0;  // into the listing
  DeleteReason reason = DeleteReason::free_space;
};

struct RetentionPlan {
  std::vector<DeleteChoice> deletions;  // oldest first
  std::uint64_t kept_back = 0;          // files that would have gone but may not (open run, not handed over)
  bool blocked = false;                 // free space stays below free_gib although everything allowed goes
};

/// What to delete from `files` (any order) given the disk's free bytes now and the clock: the oldest
/// files (by run, then segment) of finished runs first, each for the first limit it is over, until no
/// limit is. `handoff_required`: a file must be handed over (KeepAfter::handed_over). Thread: any.
[[nodiscard]] RetentionPlan plan_retention(const std::vector<KeptFile>& files, const KeepOptions& keep,
                                           bool handoff_required, std::uint64_t free_bytes, std::int64_t now_ns);

/// GiB (2^30 bytes) as bytes, rounded down.
[[nodiscard]] std::uint64_t gib_bytes(double gib) noexcept;

}  // namespace weir::rec

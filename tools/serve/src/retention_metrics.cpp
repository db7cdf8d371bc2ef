// PART.retention_* keys of a recorder with `keep` (recorders/stream retention) -> weir_retention_*
// families. A part is such a recorder when it keeps PART.retention_deleted_files.
#include "retention_metrics.hpp"

#include <array>
#include <string_view>

#include "part_series.hpp"

namespace weir::serve {

namespace {

constexpr std::string_view kRetentionMarker = ".retention_deleted_files";

constexpr std::array kRetentionExported{
    PartSeries{"weir_retention_deleted_files_total", "retention_deleted_files", "counter",
                    "Closed files of finished runs that retention deleted (each recorded in its run record), by this recorder process."},
    PartSeries{"weir_retention_deleted_bytes_total", "retention_deleted_bytes", "counter", "Bytes of the files retention deleted."},
    PartSeries{"weir_retention_failures_total", "retention_failures", "counter",
                    "Deletions that failed (the file, or its record); the file stays."},
    PartSeries{"weir_retention_kept_back", "retention_kept_back", "gauge",
                    "Files over a keep limit that may not go yet (the open run, or not handed over)."},
    PartSeries{"weir_retention_blocked", "retention_blocked", "gauge",
                    "1 while free space is below keep.free_gib and nothing more may be deleted: the recorder stops at its floor next."},
};

}  // namespace

void append_retention_metrics(std::string& out, const core::KvStore& kv) {
  append_part_series(out, kv, kRetentionMarker, kRetentionExported);
}

}  // namespace weir::serve

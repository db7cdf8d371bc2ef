// PART.FIELD keys of a recorder with an on_close hand-off (recorders/stream closed_files) ->
// weir_handoff_* and weir_*hash* families. A part is such a recorder when it keeps PART.handoff_ok.
#include "handoff_metrics.hpp"

#include <array>
#include <string_view>

#include "part_series.hpp"

namespace weir::serve {

namespace {

constexpr std::string_view kHandoffMarker = ".handoff_ok";

constexpr std::array kHandoffExported{
    PartSeries{"weir_handoff_ok_total", "handoff_ok", "counter",
             "Closed files whose on_close hand-off succeeded and was recorded (FILE.handed), by this recorder process."},
    PartSeries{"weir_handoff_failures_total", "handoff_failures", "counter",
             "Hand-off attempts that failed (non-zero exit, a signal, a timeout); each is retried with back-off."},
    PartSeries{"weir_handoff_timeouts_total", "handoff_timeouts", "counter", "Hand-off commands killed at their timeout."},
    PartSeries{"weir_handoff_pending", "handoff_pending", "gauge", "Closed files waiting for their (next) hand-off attempt."},
    PartSeries{"weir_files_hashed_total", "files_hashed", "counter", "Closed files hashed into their SHA-256 manifest."},
    PartSeries{"weir_hashed_bytes_total", "bytes_hashed", "counter", "Bytes of closed files hashed."},
    PartSeries{"weir_hash_failures_total", "hash_failures", "counter", "Closed files left without a manifest (read or write failed)."},
};

}  // namespace

void append_handoff_metrics(std::string& out, const core::KvStore& kv) {
  append_part_series(out, kv, kHandoffMarker, kHandoffExported);
}

}  // namespace weir::serve

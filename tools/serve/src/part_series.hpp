#pragma once
// A kind of part's counters in /metrics: the PART.FIELD u64 keys of every part that keeps a marker key
// (PART + marker), as families labelled by the part's name. The EPICS drivers' and the recorders'
// hand-off counters are such kinds (epics_metrics.cpp, handoff_metrics.cpp).
#include <span>
#include <string>
#include <string_view>

#include "weir/core/kv_store.hpp"

namespace weir::serve {

struct PartSeries {
  std::string_view family, field, type, help;  // weir_x_total, "x" (PART.x), "counter" or "gauge", HELP text
};

/// Appends each series' family with one sample per part that has the field; nothing when no key ends
/// with `marker` (e.g. ".pvs_connected"). Thread: any.
void append_part_series(std::string& out, const core::KvStore& kv, std::string_view marker,
                        std::span<const PartSeries> series);

}  // namespace weir::serve

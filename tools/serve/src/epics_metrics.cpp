// PART.FIELD keys of driver "epics" (epics/client) -> weir_epics_* families. A part is an EPICS
// driver when it keeps PART.pvs_connected; the fields are what follows its last dot.
#include "epics_metrics.hpp"

#include <array>
#include <string_view>

#include "part_series.hpp"

namespace weir::serve {

namespace {

constexpr std::string_view kMarker = ".pvs_connected";

constexpr std::array kExported{
    PartSeries{"weir_epics_pvs", "pvs", "gauge", "PVs an EPICS driver monitors."},
    PartSeries{"weir_epics_pvs_connected", "pvs_connected", "gauge", "PVs an EPICS driver has connected now."},
    PartSeries{"weir_epics_updates_total", "updates", "counter",
             "Monitor updates an EPICS driver took: scalar values logged and waveform frames published."},
    PartSeries{"weir_epics_connects_total", "connects", "counter", "PV connections (first ones and reconnects)."},
    PartSeries{"weir_epics_disconnects_total", "disconnects", "counter", "PV disconnections (their server went away)."},
    PartSeries{"weir_epics_dropped_total", "dropped", "counter",
             "Updates an EPICS driver dropped (its queue full, or its PV log channel refused a block); each is in the log."},
    PartSeries{"weir_epics_truncated_total", "truncated", "counter", "Waveform updates longer than their channel's frame."},
    PartSeries{"weir_epics_log_blocks_total", "log_blocks", "counter", "PV log blocks published."},
};

}  // namespace

void append_epics_metrics(std::string& out, const core::KvStore& kv) {
  append_part_series(out, kv, kMarker, kExported);
}

}  // namespace weir::serve

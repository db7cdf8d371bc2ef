#pragma once
// The kernel's view of the system clock's synchronisation as /metrics families: the figures
// node_exporter shows as node_timex_*, for boxes that run weir serve only. Read by
// weir/tools/clock_sync.hpp, which `weir run`'s clock_unsynchronised alert reads too.
#include <string>

#include "weir/tools/clock_sync.hpp"

namespace weir::serve {

using tools::clock_sync_from;
using tools::ClockSync;

/// Appends weir_clock_synchronized, weir_clock_max_error_seconds and weir_clock_estimated_error_seconds
/// (nothing when adjtimex fails). Thread: any.
void append_clock_metrics(std::string& out);

}  // namespace weir::serve

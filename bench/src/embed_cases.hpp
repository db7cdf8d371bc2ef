#pragma once
// The embed rows of `weir bench vectors` (embed_cases.cpp). Private to bench/.
#include "harness.hpp"
#include "suite_report.hpp"

namespace weir::bench {

/// Adds the rows embed.bare.batchB and embed.shard.batchB (windows/s per core, B = 1, 16, 64) with
/// the shard's ratio to the bare loop; says on stderr and adds nothing when the plugin was not
/// built. Runs in an arena of its own. Thread: the suite's.
void run_embed_cases(const Config& config, Results& results, Fields& fields);

}  // namespace weir::bench

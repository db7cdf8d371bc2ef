#pragma once
// What a pipeline's shards would produce, asked of the shard host.
#include "weir/config/pipeline.hpp"

namespace weir::supervisor {

/// Configures each shard for real (then stops it) to learn its output channels and refuse bad
/// parameters.
[[nodiscard]] config::ShardResolver pipeline_shard_resolver();

}  // namespace weir::supervisor

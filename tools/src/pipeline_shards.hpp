#pragma once
// What a pipeline's shards would produce, asked of the shard host when weir is built with it.
#include "weir/config/pipeline.hpp"

namespace weir::tools {

/// Configures each shard for real (then stops it) to learn its output channels and refuse bad
/// parameters; without the shard host, an empty resolver (shards then have no known outputs).
[[nodiscard]] config::ShardResolver pipeline_shard_resolver();

}  // namespace weir::tools

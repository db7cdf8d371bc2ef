#include "pipeline_shards.hpp"

namespace weir::tools {

config::ShardResolver pipeline_shard_resolver() { return {}; }

}  // namespace weir::tools

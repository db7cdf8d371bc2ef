#pragma once
// The NeXus metadata a pipeline gives its recordings (`weir record --pipeline FILE`): the entry's
// title, definition and default plot, the facility's source, and per channel the part that writes
// it, that part's settings and the channel's calibration (docs/design/recording.md, "NeXus metadata").
#include <string>

#include "weir/config/pipeline.hpp"
#include "weir/core/error.hpp"
#include "weir/recorder/nexus_meta.hpp"

namespace weir::rec {

/// Loads the pipeline text (`file` names it in errors) and collects its NeXus metadata. Settings
/// are text: numbers in their shortest form that reads back the same ("5e-05"), nested tables
/// flattened as "name.key" and "name[i]". A channel a shard writes is found by resolving the
/// pipeline with `resolver` (supervisor::pipeline_shard_resolver() configures the real shards);
/// `driver_channels` the channels drivers make themselves (supervisor::pipeline_driver_channels());
/// when that fails, only the drivers' channels are named. Fails only when the text is not a pipeline.
/// Thread: any.
[[nodiscard]] core::Result<NexusMeta> nexus_from_pipeline(const std::string& text, const std::string& file,
                                                          const config::ShardResolver& resolver,
                                                          const config::DriverChannels& driver_channels = {});

}  // namespace weir::rec

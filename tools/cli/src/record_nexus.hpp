#pragma once
// `weir record --pipeline FILE`: the NeXus metadata the pipeline gives the recording (its entry,
// source, and per channel the part that writes it, that part's settings and the calibration).
#include <string>

#include "weir/core/error.hpp"
#include "weir/recorder/nexus_meta.hpp"

namespace weir::tools {

/// Loads the pipeline text (`file` names it in errors) and collects its NeXus metadata. A channel a
/// shard writes is found by resolving the pipeline; when that fails, only the drivers' channels are.
[[nodiscard]] core::Result<rec::NexusMeta> nexus_from_pipeline(const std::string& text, const std::string& file);

}  // namespace weir::tools

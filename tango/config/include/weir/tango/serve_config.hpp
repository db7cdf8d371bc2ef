#pragma once
// `tango "serve"`: weir as a Tango device server, read and checked without libtango.
#include "weir/config/pipeline.hpp"
#include "weir/core/error.hpp"

namespace weir::tango {

/// Every `tango "serve"` of the pipeline, checked as weir-tango will read it: `file:line: tango "NAME": ...`.
[[nodiscard]] core::Result<void> check_serve(const config::Pipeline& pipeline);

}  // namespace weir::tango

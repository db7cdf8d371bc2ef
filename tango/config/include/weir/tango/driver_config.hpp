#pragma once
// `driver "tango"`: attributes of other Tango devices into keys (scalars) and channels (spectra),
// read and checked without libtango.
#include <string>
#include <vector>

#include "weir/config/pipeline.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/error.hpp"

namespace weir::tango {

/// For `weir check` (supervisor/driver_checks.cpp): refuses a bad declaration with `file:line: driver "NAME": ...`.
[[nodiscard]] core::Result<void> check_driver(const config::Pipeline& pipeline, const config::DriverDecl& driver);
/// The channels the driver makes from its settings (its attribute log, spectra), for config::resolve().
[[nodiscard]] core::Result<std::vector<core::ChannelSpec>> driver_channels(const config::DriverDecl& driver);

}  // namespace weir::tango

#pragma once
// What a pipeline's drivers would run with, asked of each driver kind before anything starts.
#include "weir/config/pipeline.hpp"
#include "weir/core/error.hpp"

namespace weir::supervisor {

/// Builds every driver's options from its settings the way the driver itself will, and refuses the
/// first bad one with `file:line: driver "NAME": what`, then every `bridge "send"` and `kafka "send"`
/// the same way.
/// sim and replay are checked when planned.
[[nodiscard]] core::Result<void> check_drivers(const config::Pipeline& pipeline);

/// The channels drivers make from their own settings, undeclared in the file (an EPICS driver's PV
/// log and waveforms), for config::resolve().
[[nodiscard]] config::DriverChannels pipeline_driver_channels();

/// The `weir` subcommand that runs a driver of `kind` from its pipeline declaration
/// (`weir SUBCOMMAND ARENA --pipeline FILE --part NAME`; "bridge recv" is two words); "" for sim and
/// replay, which take options.
[[nodiscard]] const char* driver_subcommand(const std::string& kind) noexcept;

}  // namespace weir::supervisor

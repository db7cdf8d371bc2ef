#pragma once
// The lua driver's options from a pipeline's `driver "lua" { ... }`, checked the way the driver
// will use them, so that `weir check` and `weir run` refuse bad settings before anything starts.
#include "weir/acq_lua/lua_driver.hpp"
#include "weir/config/pipeline.hpp"
#include "weir/core/error.hpp"

namespace weir::acq {

/// Reads script (required; a relative path is taken from the pipeline file's folder), call (the
/// function's name; `["function"]` is taken too),
/// period = SECONDS or per = "block" (one of them), memory_mb and instructions; the part is the
/// driver's name and its channels are decl.channels, by name only (attached as `weir run` created
/// them). Refuses an unknown key (with a did-you-mean), a wrong type or range, and a script file
/// that does not exist. Errors: `file:line: driver "NAME": message`. Thread: any.
[[nodiscard]] core::Result<LuaDriverOptions> lua_driver_options(const config::DriverDecl& decl);

/// As above, with each channel's declaration from the pipeline (dtype, rate, block ...), so that
/// the driver can create a channel missing from the arena.
[[nodiscard]] core::Result<LuaDriverOptions> lua_driver_options(const config::Pipeline& pipeline,
                                                                const config::DriverDecl& decl);

/// lua_driver_options(pipeline, decl), discarded: the check `weir check` and `weir run` make before
/// starting anything (supervisor's driver table). Thread: any.
[[nodiscard]] core::Result<void> check_lua_driver(const config::Pipeline& pipeline, const config::DriverDecl& decl);

}  // namespace weir::acq

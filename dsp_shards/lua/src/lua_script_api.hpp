#pragma once
// What a script sees besides the trimmed standard library: the block view and the `weir` table.
// Interface for script writers: dsp_shards/lua/README.md.
#include "lua_shard_state.hpp"

namespace weir::dsp::lua {

/// Creates the one view userdata (anchored in the registry, pointed to by shard->view) and the
/// global `weir` table, with output names interned to their indices. Raises a Lua error when out
/// of memory, so call it only inside lua_pcall. Requires: shard_of(L) is set up. Thread: control.
void install_script_api(lua_State* L);

}  // namespace weir::dsp::lua

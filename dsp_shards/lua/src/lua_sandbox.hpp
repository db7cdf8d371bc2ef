#pragma once
// The restricted Lua state of a lua shard: bounded heap, trimmed libraries, the script loaded, and
// the per-block instruction budget.
#include <cstdint>

#include "lua_shard_state.hpp"
#include "weir/core/error.hpp"

namespace weir::dsp::lua {

/// Creates shard.state with a heap bounded to memory_mb MiB: base (without dofile, loadfile, load,
/// print, warn), string (without dump), table, math, utf8, os.clock and os.time, and the script
/// API (the view and the `weir` table). Requires: shard's outputs, dtype and block size are set.
/// Thread: control. Fails when the state cannot be built within the limit.
[[nodiscard]] core::Result<void> open_sandbox(LuaShard& shard, std::uint32_t memory_mb);

/// Loads shard.script_path as text, runs its chunk under the instruction budget, and resolves the
/// global function shard.function_name. Thread: control. Fails with `file:line: message` for a
/// syntax or load-time error, or naming the missing function.
[[nodiscard]] core::Result<void> load_script(LuaShard& shard);

/// Resets the instruction budget before a call into the script. Thread: the shard's thread.
void arm_budget(LuaShard& shard) noexcept;

/// The message handler of every lua_pcall into the script: the message with its traceback.
int message_handler(lua_State* L);

}  // namespace weir::dsp::lua

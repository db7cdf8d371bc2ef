#pragma once
// What a failed block leaves behind: a counted status, the last error text, and one host log line
// per distinct message.
#include "lua_shard_state.hpp"

namespace weir::dsp::lua {

/// Classifies the failed lua_pcall (status, error object on top of the stack), keeps its text in
/// shard.last_error, counts it, and passes it to host->log the first time its first line is seen
/// (at most kDistinctErrors lines per shard, so a script failing every block logs a bounded amount).
/// Returns the weir_lua_status process returns. Allocates nothing. Thread: the shard's thread.
int record_failure(LuaShard& shard, int status, const weir_shard_host* host) noexcept;

}  // namespace weir::dsp::lua

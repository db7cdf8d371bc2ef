#pragma once
// The lua shard's parameters: their declaration for the host, and their parsing at configure.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lua_shard_state.hpp"
#include "weir/core/error.hpp"
#include "weir/shard.h"

namespace weir::dsp::lua {

// Positions in kParams.
enum ParamIndex : std::uint32_t { kParamScript, kParamFunction, kParamOutputs, kParamMemoryMb, kParamInstructions };

inline constexpr std::uint32_t kParamCount = kParamInstructions + 1;
extern const weir_shard_param kParams[kParamCount];

struct ShardParams {
  std::string script;
  std::string function;
  std::vector<OutputDecl> outputs;
  std::uint32_t memory_mb = 0;
  int instructions = 0;  // 0: unlimited
};

/// Reads every parameter from cfg, taking a declared default where the host passed none.
/// Thread: control. Fails with an Error naming the parameter and what is wrong with it.
[[nodiscard]] core::Result<ShardParams> read_params(const weir_shard_config& cfg);

/// Parses an outputs declaration: comma-separated `key:NAME` (f64), `keybytes:NAME:MAXBYTES` or
/// `channel:NAME` (f32, the input's block size and rate). Names are unique, 1..63 bytes, without
/// blanks, ',' or ':'. Thread: any. Fails naming the entry (1-based) and the problem.
[[nodiscard]] core::Result<std::vector<OutputDecl>> parse_outputs(std::string_view text);

}  // namespace weir::dsp::lua

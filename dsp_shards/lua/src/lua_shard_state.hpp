#pragma once
// The lua shard's instance: everything configure builds and process reads. Private to the module.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <lua.hpp>

#include "sample_ops.hpp"
#include "weir/dsp/lua_shard.h"
#include "weir/lua_sandbox/error_log.hpp"
#include "weir/lua_sandbox/sandbox.hpp"

namespace weir::dsp::lua {

inline constexpr std::size_t kMaxKeyBytes = 1U << 20;        // refuse keybytes outputs larger than 1 MiB

enum class OutputKind : std::uint8_t { key_f64, key_bytes, key_array, channel };

struct OutputDecl {
  std::string name;
  OutputKind kind;
  std::uint64_t max_bytes;  // key_bytes: the largest value; key_array: elements x 8 (f64 elements)
};

// The payload of the one view userdata. Lua owns its memory; the shard re-points it per block and
// empties it afterwards, so a view a script kept in a global never reaches a stale block.
struct ViewData {
  const void* samples;
  std::uint32_t count;
  std::uint32_t flags;
  std::uint64_t sequence;
  std::uint64_t realtime_ns;
  std::uint64_t monotonic_ns;
  std::uint64_t first_sample;
  double rate_hz;
  const SampleOps* ops;
};

struct Counters {
  std::uint64_t blocks = 0;
  std::uint64_t script_errors = 0;
  std::uint64_t memory_errors = 0;
  std::uint64_t budget_stops = 0;
  std::uint64_t emits_dropped = 0;
  std::uint64_t keys_busy = 0;
};

struct LuaShard {
  lua_sandbox::Sandbox sandbox;     // the bounded state; never moves (the shard is heap-allocated once)
  std::string script_path;
  std::string function_name;
  std::vector<OutputDecl> outputs;  // index i is cfg->outputs[i]
  std::vector<float> scratch;       // one block: weir.emit converts a table here before it claims
  std::vector<double> array_scratch;  // the largest array output: weir.set converts a table here
  std::uint32_t samples_per_block = 0;
  std::uint32_t input_dtype = 0;
  double rate_hz = 0.0;

  ViewData* view = nullptr;         // inside the userdata anchored at view_ref
  int view_ref = LUA_NOREF;
  int function_ref = LUA_NOREF;

  const weir_shard_host* host = nullptr;    // set only while process runs
  const weir_shard_block* block = nullptr;  // likewise

  Counters counters;
  lua_sandbox::ErrorLog errors;     // the last error's text; each distinct one passed to host->log once
};

/// The shard that owns L, given to its sandbox at configure.
inline LuaShard* shard_of(lua_State* L) noexcept { return lua_sandbox::owner_of<LuaShard>(L); }

}  // namespace weir::dsp::lua

#pragma once
// The lua shard's instance: everything configure builds and process reads. Private to the module.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <lua.hpp>

#include "sample_ops.hpp"
#include "weir/dsp/lua_shard.h"

namespace weir::dsp::lua {

inline constexpr std::size_t kErrorBytes = 2048;             // last error kept: message plus traceback, truncated
inline constexpr int kTraceLevels = 8;                       // innermost call levels an error's traceback shows
inline constexpr std::uint32_t kDistinctErrors = 16;         // distinct messages passed to host->log
inline constexpr std::uint32_t kMaxMemoryMb = 65536;         // refuse a heap limit past 64 GiB
inline constexpr std::int64_t kMaxInstructions = 2'147'483'647;   // lua_sethook takes an int count
inline constexpr std::size_t kMaxKeyBytes = 1U << 20;        // refuse keybytes outputs larger than 1 MiB

enum class OutputKind : std::uint8_t { key_f64, key_bytes, key_array, channel };

struct OutputDecl {
  std::string name;
  OutputKind kind;
  std::uint64_t max_bytes;  // key_bytes: the largest value; key_array: elements x 8 (f64 elements)
};

// Counted by the lua_Alloc; used_bytes <= limit_bytes always holds.
struct Heap {
  std::size_t used_bytes = 0;
  std::size_t peak_bytes = 0;
  std::size_t limit_bytes = 0;
  std::uint64_t allocations = 0;
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

struct LuaClose {
  void operator()(lua_State* L) const noexcept { lua_close(L); }
};
using LuaState = std::unique_ptr<lua_State, LuaClose>;

struct Counters {
  std::uint64_t blocks = 0;
  std::uint64_t script_errors = 0;
  std::uint64_t memory_errors = 0;
  std::uint64_t budget_stops = 0;
  std::uint64_t emits_dropped = 0;
  std::uint64_t keys_busy = 0;
  std::uint64_t errors_logged = 0;  // distinct messages passed to host->log, at most kDistinctErrors
};

struct LuaShard {
  Heap heap;    // declared before state: the state is closed first and frees into it
  LuaState state;
  std::string script_path;
  std::string function_name;
  std::vector<OutputDecl> outputs;  // index i is cfg->outputs[i]
  std::vector<float> scratch;       // one block: weir.emit converts a table here before it claims
  std::vector<double> array_scratch;  // the largest array output: weir.set converts a table here
  std::uint32_t samples_per_block = 0;
  std::uint32_t input_dtype = 0;
  double rate_hz = 0.0;
  int instruction_budget = 0;       // 0: no hook
  bool budget_blown = false;        // set by the count hook; then every instruction raises

  ViewData* view = nullptr;         // inside the userdata anchored at view_ref
  int view_ref = LUA_NOREF;
  int function_ref = LUA_NOREF;
  int handler_ref = LUA_NOREF;

  const weir_shard_host* host = nullptr;    // set only while process runs
  const weir_shard_block* block = nullptr;  // likewise

  Counters counters;
  std::uint64_t seen_errors[kDistinctErrors] = {};  // FNV-1a of each distinct first line logged
  char last_error[kErrorBytes] = {};
};

/// The shard that owns L, kept in the state's extra space at configure.
inline LuaShard* shard_of(lua_State* L) noexcept {
  LuaShard* shard = nullptr;
  std::memcpy(&shard, lua_getextraspace(L), sizeof shard);
  return shard;
}

}  // namespace weir::dsp::lua

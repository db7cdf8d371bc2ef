#include "lua_error_log.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace weir::dsp::lua {
namespace {

constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ULL;  // FNV-1a offset basis
constexpr std::uint64_t kFnvPrime = 0x100000001b3ULL;        // FNV-1a prime

// The message without its traceback identifies the error; the traceback may differ per caller.
std::uint64_t first_line_hash(const char* text) noexcept {
  std::uint64_t h = kFnvOffset;
  for (const char* c = text; *c != '\0' && *c != '\n'; ++c) h = (h ^ static_cast<unsigned char>(*c)) * kFnvPrime;
  return h;
}

void keep_text(LuaShard& shard, const char* text, std::size_t bytes) noexcept {
  const std::size_t kept = std::min(bytes, sizeof shard.last_error - 1);
  std::memcpy(shard.last_error, text, kept);
  shard.last_error[kept] = '\0';
}

}  // namespace

int record_failure(LuaShard& shard, int status, const weir_shard_host* host) noexcept {
  lua_State* L = shard.state.get();
  int result = WEIR_LUA_SCRIPT_ERROR;
  if (shard.budget_blown) {
    result = WEIR_LUA_BUDGET_EXCEEDED;
    ++shard.counters.budget_stops;
  } else if (status == LUA_ERRMEM) {
    result = WEIR_LUA_OUT_OF_MEMORY;
    ++shard.counters.memory_errors;
  } else {
    ++shard.counters.script_errors;
  }

  if (result == WEIR_LUA_OUT_OF_MEMORY) {  // Lua raises these without a position or a handler call
    std::snprintf(shard.last_error, sizeof shard.last_error,
                  "%s: not enough memory: the script's heap reached memory_mb = %zu MiB", shard.script_path.c_str(),
                  shard.heap.limit_bytes >> 20);
  } else if (lua_type(L, -1) == LUA_TSTRING) {  // converting a non-string here could allocate
    std::size_t bytes = 0;
    const char* text = lua_tolstring(L, -1, &bytes);
    keep_text(shard, text, bytes);
  } else {
    std::snprintf(shard.last_error, sizeof shard.last_error, "%s: error object is a %s value",
                  shard.script_path.c_str(), luaL_typename(L, -1));
  }

  const std::uint64_t hash = first_line_hash(shard.last_error);
  const auto logged = static_cast<std::uint32_t>(shard.counters.errors_logged);
  if (std::find(shard.seen_errors, shard.seen_errors + logged, hash) == shard.seen_errors + logged &&
      logged < kDistinctErrors) {
    shard.seen_errors[logged] = hash;
    ++shard.counters.errors_logged;
    if (host != nullptr && host->log != nullptr) host->log(host->self, 2, shard.last_error);
  }
  return result;
}

}  // namespace weir::dsp::lua

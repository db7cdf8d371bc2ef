#include "weir/lua_sandbox/error_log.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace weir::lua_sandbox {
namespace {

constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ULL;  // FNV-1a offset basis
constexpr std::uint64_t kFnvPrime = 0x100000001b3ULL;        // FNV-1a prime

// The message without its traceback identifies the error; the traceback may differ per caller.
std::uint64_t first_line_hash(const char* text) noexcept {
  std::uint64_t h = kFnvOffset;
  for (const char* c = text; *c != '\0' && *c != '\n'; ++c) h = (h ^ static_cast<unsigned char>(*c)) * kFnvPrime;
  return h;
}

}  // namespace

bool ErrorLog::first_time() noexcept {
  const std::uint64_t hash = first_line_hash(last_error_);
  if (std::find(seen_, seen_ + logged_, hash) != seen_ + logged_ || logged_ >= kDistinctErrors) return false;
  seen_[logged_++] = hash;
  return true;
}

bool ErrorLog::note(const char* text) noexcept {
  std::snprintf(last_error_, sizeof last_error_, "%s", text);
  return first_time();
}

bool ErrorLog::record(const Sandbox& sandbox, CallStatus status) noexcept {
  lua_State* L = sandbox.state();
  if (status == CallStatus::out_of_memory) {  // Lua raises these without a position or a handler call
    std::snprintf(last_error_, sizeof last_error_, "%s: not enough memory: the script's heap reached memory_mb = %zu MiB",
                  sandbox.script_path().c_str(), sandbox.heap().limit_bytes >> 20);
  } else if (lua_type(L, -1) == LUA_TSTRING) {  // converting a non-string here could allocate
    std::size_t bytes = 0;
    const char* text = lua_tolstring(L, -1, &bytes);
    const std::size_t kept = std::min(bytes, sizeof last_error_ - 1);
    std::memcpy(last_error_, text, kept);
    last_error_[kept] = '\0';
  } else {
    std::snprintf(last_error_, sizeof last_error_, "%s: error object is a %s value", sandbox.script_path().c_str(),
                  luaL_typename(L, -1));
  }
  return first_time();
}

}  // namespace weir::lua_sandbox

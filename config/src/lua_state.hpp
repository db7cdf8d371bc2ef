#pragma once
// The restricted Lua state a pipeline file runs in (see lua_state.cpp).
#include <lua.hpp>

#include <cstdint>
#include <string>

#include "weir/config/pipeline.hpp"

namespace weir::config::detail {

struct LuaState {
  static constexpr int kHookEvery = 10'000;  // instructions between two budget checks

  explicit LuaState(const LoadLimits& limits);
  LuaState(const LuaState&) = delete;
  LuaState& operator=(const LuaState&) = delete;
  ~LuaState();

  /// Runs the file; "" on success, else the error as `file:line: what`. Afterwards the registry
  /// reference decls_ref holds the list of declarations {kind, name, body, src, line}.
  std::string run(const std::string& text, const std::string& chunk_name);

  lua_State* L = nullptr;
  LoadLimits limits;
  std::size_t used = 0;        // heap bytes the state holds
  std::uint64_t executed = 0;  // instructions run, in kHookEvery steps
  int decls_ref = LUA_NOREF;
};

}  // namespace weir::config::detail

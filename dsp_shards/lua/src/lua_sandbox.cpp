#include "lua_sandbox.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "lua_script_api.hpp"

namespace weir::dsp::lua {
namespace {

using core::Errc;
using core::fail;

// Refuses growth past heap->limit_bytes; Lua then runs an emergency collection and, failing that,
// raises LUA_ERRMEM inside the script's pcall. Shrinking and freeing always succeed.
void* bounded_alloc(void* ud, void* ptr, std::size_t osize, std::size_t nsize) noexcept {
  auto* heap = static_cast<Heap*>(ud);
  const std::size_t old_bytes = ptr != nullptr ? osize : 0;  // without ptr, osize names a type
  if (nsize == 0) {
    std::free(ptr);
    heap->used_bytes -= old_bytes;
    return nullptr;
  }
  if (nsize > old_bytes && nsize - old_bytes > heap->limit_bytes - heap->used_bytes) return nullptr;
  void* block = std::realloc(ptr, nsize);
  if (block == nullptr) return nullptr;
  heap->used_bytes = heap->used_bytes - old_bytes + nsize;
  if (heap->used_bytes > heap->peak_bytes) heap->peak_bytes = heap->used_bytes;
  if (nsize > old_bytes) ++heap->allocations;
  return block;
}

// Only reached by a raise outside every pcall, which this module never makes; abort loudly.
int panic(lua_State* L) {
  const char* text = lua_tostring(L, -1);
  std::fprintf(stderr, "lua shard: unprotected Lua error: %s\n", text != nullptr ? text : "?");
  return 0;
}

void budget_hook(lua_State* L, lua_Debug* ar) {
  LuaShard* shard = shard_of(L);
  if (!shard->budget_blown) {
    shard->budget_blown = true;
    // From now on every instruction raises, so a pcall in the script cannot swallow the stop.
    lua_sethook(L, budget_hook, LUA_MASKCOUNT, 1);
  }
  lua_getinfo(L, "Sl", ar);
  lua_pushfstring(L, "%s:%d: instruction budget of %d exceeded in one block", ar->short_src, ar->currentline,
                  shard->instruction_budget);
  lua_error(L);
}

// A metatable with __gc would run a finalizer with hooks off, outside the instruction budget.
int guarded_setmetatable(lua_State* L) {
  if (lua_type(L, 2) == LUA_TTABLE) {
    lua_pushliteral(L, "__gc");
    if (lua_rawget(L, 2) != LUA_TNIL) {
      return luaL_error(L, "setmetatable: __gc is not allowed in a shard script (finalizers escape the "
                           "instruction budget)");
    }
    lua_pop(L, 1);
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

constexpr const char* kRemovedGlobals[] = {"dofile", "loadfile", "load", "print", "warn", "require"};

// Runs inside lua_pcall, so a raise (out of memory) lands there and never crosses a C++ frame
// holding a destructor.
int open_protected(lua_State* L) {
  luaL_requiref(L, LUA_GNAME, luaopen_base, 1);
  luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 1);
  luaL_requiref(L, LUA_TABLIBNAME, luaopen_table, 1);
  luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 1);
  luaL_requiref(L, LUA_UTF8LIBNAME, luaopen_utf8, 1);
  lua_settop(L, 0);
  for (const char* name : kRemovedGlobals) {
    lua_pushnil(L);
    lua_setglobal(L, name);
  }
  lua_getglobal(L, LUA_STRLIBNAME);
  lua_pushnil(L);
  lua_setfield(L, -2, "dump");  // bytecode is refused anyway; nothing to make it from
  lua_pop(L, 1);

  luaL_requiref(L, LUA_OSLIBNAME, luaopen_os, 0);
  lua_createtable(L, 0, 2);
  for (const char* name : {"clock", "time"}) {
    lua_getfield(L, -2, name);
    lua_setfield(L, -2, name);
  }
  lua_setglobal(L, LUA_OSLIBNAME);
  lua_pop(L, 1);

  lua_getglobal(L, "setmetatable");
  lua_pushcclosure(L, guarded_setmetatable, 1);
  lua_setglobal(L, "setmetatable");

  install_script_api(L);
  return 0;
}

int resolve_function(lua_State* L) {
  LuaShard* shard = shard_of(L);
  const int type = lua_getglobal(L, shard->function_name.c_str());
  if (type != LUA_TFUNCTION) {
    return luaL_error(L, "%s defines no global function '%s' (it is %s)", shard->script_path.c_str(),
                      shard->function_name.c_str(), lua_typename(L, type));
  }
  shard->function_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  return 0;
}

std::string pop_error(lua_State* L, int status) {
  if (status == LUA_ERRMEM) {
    lua_pop(L, 1);
    return "not enough memory within memory_mb = " +
           std::to_string(shard_of(L)->heap.limit_bytes >> 20) + " MiB";
  }
  const char* text = lua_tostring(L, -1);
  std::string what = text != nullptr ? text : "non-string Lua error";
  lua_pop(L, 1);
  return what;
}

core::Result<void> call_protected(lua_State* L, lua_CFunction f, const char* context) {
  lua_pushcfunction(L, f);
  const int status = lua_pcall(L, 0, 0, 0);
  if (status != LUA_OK) return fail(Errc::invalid_argument, std::string(context) + ": " + pop_error(L, status));
  return {};
}

}  // namespace

core::Result<void> open_sandbox(LuaShard& shard, std::uint32_t memory_mb) {
  shard.heap.limit_bytes = static_cast<std::size_t>(memory_mb) << 20;
  lua_State* L = lua_newstate(bounded_alloc, &shard.heap);
  if (L == nullptr) {
    return fail(Errc::invalid_argument, "cannot create a Lua state within memory_mb = " + std::to_string(memory_mb));
  }
  shard.state.reset(L);
  LuaShard* self = &shard;
  std::memcpy(lua_getextraspace(L), &self, sizeof self);
  lua_atpanic(L, panic);
  return call_protected(L, open_protected, "setting up the Lua state");
}

core::Result<void> load_script(LuaShard& shard) {
  lua_State* L = shard.state.get();
  lua_settop(L, 0);
  int status = luaL_loadfilex(L, shard.script_path.c_str(), "t");
  if (status != LUA_OK) return fail(Errc::invalid_argument, "script: " + pop_error(L, status));
  arm_budget(shard);
  status = lua_pcall(L, 0, 0, 0);  // no traceback: `file:line: message` is what configure reports
  lua_sethook(L, nullptr, 0, 0);
  shard.budget_blown = false;
  if (status != LUA_OK) return fail(Errc::invalid_argument, "script: " + pop_error(L, status));
  lua_settop(L, 0);
  return call_protected(L, resolve_function, "function");
}

void arm_budget(LuaShard& shard) noexcept {
  if (shard.instruction_budget <= 0) return;
  shard.budget_blown = false;
  lua_sethook(shard.state.get(), budget_hook, LUA_MASKCOUNT, shard.instruction_budget);
}

int message_handler(lua_State* L) {
  const char* message = lua_tostring(L, 1);
  if (message == nullptr) {
    if (luaL_callmeta(L, 1, "__tostring") != 0 && lua_type(L, -1) == LUA_TSTRING) {
      message = lua_tostring(L, -1);
    } else {
      message = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
  }
  // luaL_traceback first measures the whole stack, each level a walk from the top: about a second
  // after a runaway recursion. Only the innermost levels are shown, so only they are walked.
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, message);
  luaL_addstring(&b, "\nstack traceback:");
  lua_Debug ar;
  for (int level = 1; lua_getstack(L, level, &ar) != 0; ++level) {
    if (level > kTraceLevels) {
      luaL_addstring(&b, "\n\t...");
      break;
    }
    lua_getinfo(L, "Sln", &ar);
    if (ar.currentline > 0) {
      lua_pushfstring(L, "\n\t%s:%d: in ", ar.short_src, ar.currentline);
    } else {
      lua_pushfstring(L, "\n\t%s: in ", ar.short_src);
    }
    luaL_addvalue(&b);
    if (ar.name != nullptr) {
      lua_pushfstring(L, "function '%s'", ar.name);
    } else if (*ar.what == 'm') {
      lua_pushliteral(L, "main chunk");
    } else {
      lua_pushfstring(L, "function <%s:%d>", ar.short_src, ar.linedefined);
    }
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  return 1;
}

}  // namespace weir::dsp::lua

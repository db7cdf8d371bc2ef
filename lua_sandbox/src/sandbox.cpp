#include "weir/lua_sandbox/sandbox.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace weir::lua_sandbox {
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

// Only reached by a raise outside every pcall, which this module never makes; say so loudly.
int panic(lua_State* L) {
  const char* text = lua_tostring(L, -1);
  std::fprintf(stderr, "lua sandbox: unprotected Lua error: %s\n", text != nullptr ? text : "?");
  return 0;
}

// A metatable with __gc would run a finalizer with hooks off, outside the instruction budget.
int guarded_setmetatable(lua_State* L) {
  if (lua_type(L, 2) == LUA_TTABLE) {
    lua_pushliteral(L, "__gc");
    if (lua_rawget(L, 2) != LUA_TNIL) {
      return luaL_error(L, "setmetatable: __gc is not allowed in a %s (finalizers escape the instruction budget)",
                        Sandbox::of(L)->options().script_kind.c_str());
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
int open_libraries(lua_State* L) {
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
  return 0;
}

}  // namespace

Sandbox* Sandbox::of(lua_State* L) noexcept {
  Sandbox* sandbox = nullptr;
  std::memcpy(&sandbox, lua_getextraspace(L), sizeof sandbox);
  return sandbox;
}

void Sandbox::budget_hook(lua_State* L, lua_Debug* ar) {
  Sandbox* sandbox = of(L);
  if (!sandbox->budget_blown_) {
    sandbox->budget_blown_ = true;
    // From now on every instruction raises, so a pcall in the script cannot swallow the stop.
    lua_sethook(L, budget_hook, LUA_MASKCOUNT, 1);
  }
  lua_getinfo(L, "Sl", ar);
  lua_pushfstring(L, "%s:%d: instruction budget of %d exceeded %s", ar->short_src, ar->currentline,
                  sandbox->options_.instructions, sandbox->options_.budget_scope.c_str());
  lua_error(L);
}

std::string Sandbox::pop_error(int status) {
  lua_State* L = state_.get();
  if (status == LUA_ERRMEM) {
    lua_pop(L, 1);
    return "not enough memory within memory_mb = " + std::to_string(heap_.limit_bytes >> 20) + " MiB";
  }
  const char* text = lua_tostring(L, -1);
  std::string what = text != nullptr ? text : "non-string Lua error";
  lua_pop(L, 1);
  return what;
}

core::Result<void> Sandbox::open(const SandboxOptions& options, void* owner) {
  if (options.memory_mb == 0 || options.memory_mb > kMaxMemoryMb) {
    return fail(Errc::invalid_argument, "memory_mb = " + std::to_string(options.memory_mb) + " is outside [1, " +
                                            std::to_string(kMaxMemoryMb) + "]");
  }
  if (options.instructions < 0) {
    return fail(Errc::invalid_argument, "instructions = " + std::to_string(options.instructions) + " is negative");
  }
  options_ = options;
  owner_ = owner;
  heap_.limit_bytes = static_cast<std::size_t>(options.memory_mb) << 20;
  lua_State* L = lua_newstate(bounded_alloc, &heap_);
  if (L == nullptr) {
    return fail(Errc::invalid_argument,
                "cannot create a Lua state within memory_mb = " + std::to_string(options.memory_mb));
  }
  state_.reset(L);
  Sandbox* self = this;
  std::memcpy(lua_getextraspace(L), &self, sizeof self);
  lua_atpanic(L, panic);
  return run_protected(open_libraries, "setting up the Lua state");
}

core::Result<void> Sandbox::run_protected(lua_CFunction f, const char* context) {
  lua_State* L = state_.get();
  lua_pushcfunction(L, f);
  const int status = lua_pcall(L, 0, 0, 0);
  if (status != LUA_OK) return fail(Errc::invalid_argument, std::string(context) + ": " + pop_error(status));
  return {};
}

core::Result<void> Sandbox::load_file(const std::string& path) {
  lua_State* L = state_.get();
  lua_settop(L, 0);
  script_path_ = path;
  const int status = luaL_loadfilex(L, path.c_str(), "t");
  if (status != LUA_OK) return fail(Errc::invalid_argument, pop_error(status));
  arm_budget();
  const int ran = lua_pcall(L, 0, 0, 0);  // no traceback: `file:line: message` is what a refusal reports
  disarm_budget();
  if (ran != LUA_OK) return fail(Errc::invalid_argument, pop_error(ran));
  lua_settop(L, 0);
  return {};
}

core::Result<void> Sandbox::load_text(std::string_view text, const std::string& chunk_name) {
  lua_State* L = state_.get();
  lua_settop(L, 0);
  script_path_ = chunk_name;
  const std::string name = "@" + chunk_name;  // '@': messages name it as a file, not as source text
  const int status = luaL_loadbufferx(L, text.data(), text.size(), name.c_str(), "t");
  if (status != LUA_OK) return fail(Errc::invalid_argument, pop_error(status));
  arm_budget();
  const int ran = lua_pcall(L, 0, 0, 0);
  disarm_budget();
  if (ran != LUA_OK) return fail(Errc::invalid_argument, pop_error(ran));
  lua_settop(L, 0);
  return {};
}

core::Result<int> Sandbox::function_ref(const std::string& name) {
  struct Lookup {
    const std::string* name;
    const std::string* path;
    int ref;
  } lookup{&name, &script_path_, LUA_NOREF};
  lua_State* L = state_.get();
  lua_pushcfunction(L, [](lua_State* S) {
    auto* in = static_cast<Lookup*>(lua_touserdata(S, 1));
    const int type = lua_getglobal(S, in->name->c_str());
    if (type != LUA_TFUNCTION) {
      return luaL_error(S, "%s defines no global function '%s' (it is %s)", in->path->c_str(), in->name->c_str(),
                        lua_typename(S, type));
    }
    in->ref = luaL_ref(S, LUA_REGISTRYINDEX);
    return 0;
  });
  lua_pushlightuserdata(L, &lookup);
  const int status = lua_pcall(L, 1, 0, 0);
  if (status != LUA_OK) return fail(Errc::invalid_argument, pop_error(status));
  return lookup.ref;
}

CallStatus Sandbox::call(int nargs, int nresults) noexcept {
  lua_State* L = state_.get();
  const int function_index = lua_gettop(L) - nargs;
  lua_pushcfunction(L, message_handler);  // a light C function: pushing it allocates nothing
  lua_insert(L, function_index);
  arm_budget();
  const int status = lua_pcall(L, nargs, nresults, function_index);
  const bool blown = budget_blown_;
  disarm_budget();
  lua_remove(L, function_index);
  if (status == LUA_OK) return CallStatus::ok;
  if (blown) return CallStatus::budget_exceeded;
  if (status == LUA_ERRMEM) return CallStatus::out_of_memory;
  return CallStatus::error;
}

void Sandbox::arm_budget() noexcept {
  budget_blown_ = false;
  if (options_.instructions <= 0) return;
  lua_sethook(state_.get(), budget_hook, LUA_MASKCOUNT, options_.instructions);
}

void Sandbox::disarm_budget() noexcept {
  lua_sethook(state_.get(), nullptr, 0, 0);
  budget_blown_ = false;
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

}  // namespace weir::lua_sandbox

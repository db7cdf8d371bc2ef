// The restricted Lua state a pipeline file runs in: bounded heap, bounded instruction count, only
// the safe parts of the standard library, and the pipeline vocabulary from prelude.lua.
#include "lua_state.hpp"

#include <cstdlib>

#include <fmt/core.h>

namespace weir::config::detail {

namespace {

// The prelude runs with the whole base library (it needs debug.getinfo for file:line) and returns
// the environment the user's file gets, plus the table of declarations it fills.
constexpr const char* kPrelude = R"lua(
local getinfo, setmetatable, error, type, tostring = debug.getinfo, setmetatable, error, type, tostring
local decls = {}

local function origin()
  local info = getinfo(3, "Sl")  -- 1: here, 2: the vocabulary function, 3: the pipeline file
  local src = info.source
  if src:sub(1, 1) == "@" or src:sub(1, 1) == "=" then src = src:sub(2) end
  return src, info.currentline
end

local function declare(kind, named)
  if not named then
    return function(body)
      local src, line = origin()
      if type(body) ~= "table" then error(kind .. " takes a table of settings: " .. kind .. " { ... }", 2) end
      decls[#decls + 1] = { kind = kind, body = body, src = src, line = line }
    end
  end
  return function(name)
    local src, line = origin()
    if type(name) ~= "string" then
      error(kind .. ' takes a name first: ' .. kind .. ' "name" { ... }, not a ' .. type(name), 2)
    end
    return function(body)
      if type(body) ~= "table" then error(kind .. ' "' .. name .. '" takes a table of settings', 2) end
      decls[#decls + 1] = { kind = kind, name = name, body = body, src = src, line = line }
    end
  end
end

local function distance(a, b)
  local prev, cur = {}, {}
  for j = 0, #b do prev[j] = j end
  for i = 1, #a do
    cur[0] = i
    for j = 1, #b do
      local cost = a:sub(i, i) == b:sub(j, j) and 0 or 1
      cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
    end
    prev, cur = cur, prev
  end
  return prev[#b]
end

local env = {
  arena = declare("arena", false), channel = declare("channel", true), driver = declare("driver", true),
  shard = declare("shard", true), record = declare("record", true), bridge = declare("bridge", true),
  kafka = declare("kafka", true), ann = declare("ann", true), epics = declare("epics", true), tango = declare("tango", true),
  entry = declare("entry", false), source = declare("source", true), alert = declare("alert", true),
  print = print, pairs = pairs, ipairs = ipairs, next = next, select = select, type = type,
  tostring = tostring, tonumber = tonumber, error = error, assert = assert, pcall = pcall,
  rawequal = rawequal, rawget = rawget, rawlen = rawlen, setmetatable = setmetatable,
  getmetatable = getmetatable, string = string, table = table, math = math, utf8 = utf8,
}
local forbidden = { io = true, os = true, require = true, dofile = true, loadfile = true, load = true,
                    debug = true, package = true, collectgarbage = true, coroutine = true }
setmetatable(env, { __index = function(_, key)
  if forbidden[key] then error("'" .. tostring(key) .. "' is not available in a pipeline file", 2) end
  local best, best_d = nil, 3
  for name in pairs(env) do
    local d = distance(tostring(key), name)
    if d < best_d then best, best_d = name, d end
  end
  error("unknown name '" .. tostring(key) .. "'" .. (best and (" (did you mean '" .. best .. "'?)") or ""), 2)
end })
return env, decls
)lua";

void* bounded_alloc(void* ud, void* ptr, std::size_t old_size, std::size_t new_size) noexcept {
  auto* s = static_cast<LuaState*>(ud);
  if (ptr == nullptr) old_size = 0;  // old_size then names the object's type, not a size
  if (new_size == 0) {
    std::free(ptr);
    s->used -= old_size;
    return nullptr;
  }
  if (new_size > old_size && s->used + (new_size - old_size) > s->limits.memory_bytes) return nullptr;
  void* p = std::realloc(ptr, new_size);
  if (p != nullptr) s->used = s->used - old_size + new_size;
  return p;
}

void count_hook(lua_State* L, lua_Debug* /*ar*/) {
  void* ud = nullptr;
  lua_getallocf(L, &ud);
  auto* s = static_cast<LuaState*>(ud);
  s->executed += LuaState::kHookEvery;
  if (s->limits.instructions != 0 && s->executed > s->limits.instructions) {
    luaL_where(L, 0);  // in a hook, level 0 is the Lua function that was running: its file:line
    lua_pushfstring(L, "the file ran more than %d million Lua instructions while loading (an endless loop?)",
                    static_cast<int>(s->limits.instructions / 1'000'000));
    lua_concat(L, 2);
    lua_error(L);
  }
}

int message_handler(lua_State* L) {
  if (lua_type(L, 1) != LUA_TSTRING) lua_pushstring(L, luaL_tolstring(L, 1, nullptr));
  return 1;
}

}  // namespace

LuaState::LuaState(const LoadLimits& l) : limits(l) {
  L = lua_newstate(bounded_alloc, this);
  if (L == nullptr) return;
  struct Library {
    const char* name;
    lua_CFunction open;
  };
  for (const Library& lib : {Library{"_G", luaopen_base}, Library{LUA_STRLIBNAME, luaopen_string},
                             Library{LUA_TABLIBNAME, luaopen_table}, Library{LUA_MATHLIBNAME, luaopen_math},
                             Library{LUA_UTF8LIBNAME, luaopen_utf8}, Library{LUA_DBLIBNAME, luaopen_debug}}) {
    luaL_requiref(L, lib.name, lib.open, 1);
    lua_pop(L, 1);
  }
}

LuaState::~LuaState() {
  if (L != nullptr) lua_close(L);
}

std::string LuaState::run(const std::string& text, const std::string& chunk_name) {
  if (L == nullptr) return "cannot create a Lua state";
  lua_pushcfunction(L, message_handler);
  const int handler = lua_gettop(L);
  if (luaL_loadbuffer(L, kPrelude, std::char_traits<char>::length(kPrelude), "=weir prelude") != LUA_OK ||
      lua_pcall(L, 0, 2, handler) != LUA_OK)
    return std::string("pipeline prelude: ") + lua_tostring(L, -1);
  decls_ref = luaL_ref(L, LUA_REGISTRYINDEX);  // pops the declarations; the environment stays on top
  const int env = lua_gettop(L);
  // Binary chunks are refused ("t"): bytecode can break the VM's safety.
  if (luaL_loadbufferx(L, text.data(), text.size(), ("@" + chunk_name).c_str(), "t") != LUA_OK)
    return lua_tostring(L, -1);
  lua_pushvalue(L, env);
  lua_setupvalue(L, -2, 1);  // the chunk's _ENV: the restricted environment
  lua_sethook(L, count_hook, LUA_MASKCOUNT, kHookEvery);
  const int rc = lua_pcall(L, 0, 0, handler);
  lua_sethook(L, nullptr, 0, 0);
  if (rc != LUA_OK) {
    if (rc == LUA_ERRMEM)
      return fmt::format("{}: the file used more than {} MiB of Lua memory while loading", chunk_name,
                         limits.memory_bytes >> 20);
    return lua_tostring(L, -1);
  }
  lua_settop(L, 0);
  return {};
}

}  // namespace weir::config::detail

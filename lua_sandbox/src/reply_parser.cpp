#include "weir/lua_sandbox/reply_parser.hpp"

#include <string>

#include "weir/lua_sandbox/error_log.hpp"

namespace weir::lua_sandbox {
namespace {

using core::Errc;
using core::fail;

struct Arguments {
  const std::string* function;
  const std::string* path;
  std::string_view reply;
};

// Pushes the function and the reply; inside lua_pcall, as both may raise (memory, no function).
int push_call(lua_State* L) {
  const auto* in = static_cast<const Arguments*>(lua_touserdata(L, 1));
  const int type = lua_getglobal(L, in->function->c_str());
  if (type != LUA_TFUNCTION) {
    return luaL_error(L, "%s defines no global function '%s' (it is %s)", in->path->c_str(), in->function->c_str(),
                      lua_typename(L, type));
  }
  lua_pushlstring(L, in->reply.data(), in->reply.size());
  return 2;
}

std::string shape_error(const Sandbox& sandbox, const std::string& function, const std::string& what) {
  return sandbox.script_path() + ": " + function + " " + what;
}

// The result on top of the stack, converted; reads without raising or allocating in Lua.
core::Result<LuaReply> convert(lua_State* L, const Sandbox& sandbox, const std::string& function) {
  switch (lua_type(L, -1)) {
    case LUA_TNIL: return LuaReply{std::monostate{}};
    case LUA_TNUMBER: return LuaReply{static_cast<double>(lua_tonumber(L, -1))};
    case LUA_TSTRING: {
      std::size_t bytes = 0;
      const char* text = lua_tolstring(L, -1, &bytes);
      return LuaReply{std::string(text, bytes)};
    }
    case LUA_TTABLE: {
      const auto count = static_cast<lua_Integer>(lua_rawlen(L, -1));
      std::vector<double> numbers;
      numbers.reserve(static_cast<std::size_t>(count));
      for (lua_Integer i = 1; i <= count; ++i) {
        const int type = lua_rawgeti(L, -1, i);
        if (type != LUA_TNUMBER) {
          const std::string got = lua_typename(L, type);
          lua_pop(L, 1);
          return fail(Errc::invalid_argument, shape_error(sandbox, function,
                                                          "returned a list whose element " + std::to_string(i) +
                                                              " is a " + got + ", not a number"));
        }
        numbers.push_back(static_cast<double>(lua_tonumber(L, -1)));
        lua_pop(L, 1);
      }
      return LuaReply{std::move(numbers)};
    }
    default: break;
  }
  return fail(Errc::invalid_argument,
              shape_error(sandbox, function,
                          std::string("returned a ") + luaL_typename(L, -1) +
                              "; expected a number, a list of numbers, a string or nil"));
}

}  // namespace

core::Result<LuaReply> call_parser(Sandbox& sandbox, const std::string& function, std::string_view reply) {
  lua_State* L = sandbox.state();
  const int base = lua_gettop(L);
  Arguments args{&function, &sandbox.script_path(), reply};
  lua_pushcfunction(L, push_call);
  lua_pushlightuserdata(L, &args);
  if (const int pushed = lua_pcall(L, 1, 2, 0); pushed != LUA_OK) {
    std::string what = pushed == LUA_ERRMEM ? sandbox.script_path() + ": not enough memory to call " + function
                                            : std::string(lua_tostring(L, -1));
    lua_settop(L, base);
    return fail(Errc::invalid_argument, std::move(what));
  }
  const CallStatus status = sandbox.call(1, 1);
  if (status != CallStatus::ok) {
    ErrorLog text;  // formats the failure as every sandbox user reports it
    (void)text.record(sandbox, status);
    lua_settop(L, base);
    return fail(Errc::invalid_argument, text.last_error());
  }
  auto converted = convert(L, sandbox, function);
  lua_settop(L, base);
  return converted;
}

}  // namespace weir::lua_sandbox

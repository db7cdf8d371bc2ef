#pragma once
// Calling a script's function on one instrument reply: the entry point an instrument driver uses
// when a query's reply pattern is a Lua function.
//
//   lua_sandbox::Sandbox sandbox;                          // never moves: a member, or in a unique_ptr
//   if (auto ok = sandbox.open({.memory_mb = 16, .instructions = 100000}); !ok) ...
//   if (auto ok = sandbox.load_file("parsers.lua"); !ok) ...  // "parsers.lua:3: ..." for a syntax error
//   auto reply = lua_sandbox::call_parser(sandbox, "parse_status", "+1.25E-3,OK\r\n");
//   if (!reply) count_and_log(reply.error().what);         // "parsers.lua:7: bad reply\nstack traceback: ..."
//   else if (auto* x = std::get_if<double>(&*reply)) ...   // also std::vector<double>, std::string, monostate
//
// In parsers.lua:  function parse_status(reply) local v = reply:match("^(%S+),") return tonumber(v) end
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "weir/core/error.hpp"
#include "weir/lua_sandbox/sandbox.hpp"

namespace weir::lua_sandbox {

/// What a parser returned: nil or nothing (monostate: the reply holds no value), a number, a list
/// of numbers (a table read as the sequence t[1..#t]; every element a number), or a string.
using LuaReply = std::variant<std::monostate, double, std::vector<double>, std::string>;

/// Calls the global function `function` of the sandbox's script with `reply` as its one string
/// argument, under the instruction budget and memory limit, and converts its first result.
/// Fails (Errc::invalid_argument) with:
///   - "FILE defines no global function 'NAME' (it is TYPE)" when there is no such function;
///   - the script's error, `FILE:LINE: message` and a short traceback, for a runtime error;
///   - "FILE:LINE: instruction budget of N exceeded ..." when the budget ran out;
///   - "FILE: not enough memory: the script's heap reached memory_mb = N MiB";
///   - "FILE: NAME returned a boolean; expected a number, a list of numbers, a string or nil", or
///     "... element 3 of its list is a string, not a number", for a result of the wrong shape.
/// The sandbox stays usable after every failure. Requires: a script loaded. Thread: the sandbox's.
[[nodiscard]] core::Result<LuaReply> call_parser(Sandbox& sandbox, const std::string& function,
                                                 std::string_view reply);

}  // namespace weir::lua_sandbox

#pragma once
// Reply parsers written in Lua: `reply = "lua:FUNCTION"` calls FUNCTION(reply) of the instrument's
// `script` in a bounded lua_sandbox state (heap memory_mb, instructions per reply) and takes what it
// returns: a number (an f64 key, and a sample when the query has a channel), a list of numbers (an
// f64 array key), a string (a text key), or nil (the reply holds no value: a mismatch).
//
//   -- parsers.lua
//   function status_volts(reply) return tonumber(reply:match("VOLT:(%S+);")) end
//
// A script error, a blown instruction budget or a full heap makes parse() return
// ParseStatus::failed (the driver counts it as P.parser_errors and goes on); last_error() says why,
// `parsers.lua:2: ...` with a short traceback.
#include <cstdint>
#include <string>

#include "weir/core/error.hpp"
#include "weir/instrument/instrument_options.hpp"
#include "weir/instrument/reply_parser.hpp"

namespace weir::acq {

inline constexpr std::size_t kLuaReplyTextBytes = 65536;  // the longest string a Lua parser may return

/// How the state a script's parsers share is bounded.
struct LuaParserLimits {
  std::uint32_t memory_mb = kDefaultScriptMemoryMb;  // 1..kMaxScriptMemoryMb
  int instructions = kDefaultScriptInstructions;     // per reply; 0: unlimited
};

/// The limits an instrument's options ask for (memory_mb, instructions). Thread: any.
[[nodiscard]] LuaParserLimits lua_parser_limits(const InstrumentOptions& options) noexcept;

/// A factory for run_instrument: each script is loaded once, into one sandbox shared by every
/// parser made from it (they run on the driver's one thread); each parser holds a reference to its
/// function. Fails with "cannot open FILE", `FILE:LINE: message` for a script that does not load,
/// or "FILE defines no global function 'NAME' (it is nil)". Thread: the factory and its parsers on
/// one thread at a time.
[[nodiscard]] LuaReplyParserFactory lua_reply_parser_factory(const LuaParserLimits& limits);

/// What `weir check` asks before anything starts: when a query's reply is "lua:FUNCTION", the
/// script loads in a sandbox with the options' limits and defines every such function. Errors name
/// the query: "query 2 ('STAT?'): reply 'lua:status': parse.lua defines no global function ...".
/// Thread: any.
[[nodiscard]] core::Result<void> check_lua_replies(const InstrumentOptions& options);

}  // namespace weir::acq

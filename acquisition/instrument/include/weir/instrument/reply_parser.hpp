#pragma once
// Reply parsers: what a query's reply means. Built-in: "number" (one number -> an f64 key),
// "numbers" (numbers separated by commas or whitespace -> an f64 array key), "text" (the reply as
// it is -> a text key). "lua:FUNCTION" names a function of the instrument's Lua script; it plugs in
// through a LuaReplyParserFactory (weir::acq_instrument_lua makes one over weir::lua_sandbox), so
// that this library itself does not depend on Lua.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "weir/core/error.hpp"

namespace weir::acq {

enum class ReplyKind : std::uint8_t { number, numbers, text, lua };

/// What a query's `reply` setting asks for: a kind, and the function name for lua.
struct ReplySpec {
  ReplyKind kind = ReplyKind::number;
  std::string function;  // lua only
};

/// "number" | "numbers" | "text" | "lua:FUNCTION". Thread: any.
[[nodiscard]] core::Result<ReplySpec> parse_reply_spec(std::string_view text);
[[nodiscard]] const char* reply_kind_name(ReplyKind kind) noexcept;

enum class [[nodiscard]] ParseStatus : std::uint8_t {
  ok = 0,
  mismatch = 1,  // the reply is not what the pattern asks for
  too_many = 2,  // more numbers (or text) than the parser has room for
  failed = 3,    // the parser itself failed (a Lua error, its instruction budget or heap ran out): last_error()
};

/// One parsed reply. Reused from reply to reply: numbers keeps its capacity (set once by the
/// parser's owner), so parsing allocates nothing. A parser sets `kind` to what it produced.
struct ParsedReply {
  ReplyKind kind = ReplyKind::number;  // number, numbers or text (never lua)
  double number = 0;
  std::vector<double> numbers;  // capacity: the most numbers a reply may hold
  std::string_view text;        // text: points into the reply line
};

/// Turns one reply line (terminator removed) into a value. Thread: one at a time per parser.
class ReplyParser {
 public:
  virtual ~ReplyParser() = default;
  /// Hot path for the instrument loop: no allocation beyond `out`'s fixed capacity, no throw.
  virtual ParseStatus parse(std::string_view reply, ParsedReply& out) noexcept = 0;
  /// Why the last parse() returned failed (or refused a result's shape), for people; "" when it
  /// never did. Valid until the next parse().
  [[nodiscard]] virtual const char* last_error() const noexcept { return ""; }
};

/// Builds a parser for "lua:FUNCTION": (script file, function name) -> parser, or an error naming
/// the script and function. weir::acq_instrument_lua provides one (lua_reply_parser.hpp).
using LuaReplyParserFactory =
    std::function<core::Result<std::unique_ptr<ReplyParser>>(const std::string& script, const std::string& function)>;

/// A parser for `spec`. lua needs `lua_factory` and a script; without the factory it is refused
/// with a message that says so. Thread: any (cold path).
[[nodiscard]] core::Result<std::unique_ptr<ReplyParser>> make_reply_parser(
    const ReplySpec& spec, const std::string& script = {}, const LuaReplyParserFactory& lua_factory = {});

/// One number, with surrounding whitespace allowed: "+1.25E-03", "-7", "nan", "9.9E37".
/// mismatch for anything else (empty, two numbers, trailing text). Thread: any.
ParseStatus parse_number(std::string_view text, double& out) noexcept;
/// Numbers separated by commas and/or whitespace ("1,2,3", "1 2  3", "1, 2, 3"); an empty reply
/// is zero numbers. Writes at most out.size(); too_many past that. Thread: any.
ParseStatus parse_numbers(std::string_view text, std::span<double> out, std::size_t& count) noexcept;

}  // namespace weir::acq

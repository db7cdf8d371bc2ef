// call_parser: a script's function on one instrument reply, converted to a number, a list, a string
// or nothing, with every failure an error and the sandbox usable afterwards.
#include <doctest/doctest.h>

#include <string>
#include <variant>
#include <vector>

#include "weir/lua_sandbox/reply_parser.hpp"
#include "weir/lua_sandbox/sandbox.hpp"

namespace {

using weir::lua_sandbox::call_parser;
using weir::lua_sandbox::LuaReply;
using weir::lua_sandbox::Sandbox;
using weir::lua_sandbox::SandboxOptions;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

constexpr const char* kParsers = R"(
function volts(reply) return tonumber(reply:match('^%s*(%S+)')) end
function triple(reply)
  local out = {}
  for field in reply:gmatch('[^,]+') do out[#out + 1] = tonumber(field) end
  return out
end
function ident(reply) return reply:match('^([^,]+)') end
function nothing(reply) if reply == '' then return nil end return end
function flag(reply) return reply == 'ON' end
function holes(reply) return {1, 'two', 3} end
function fails(reply) error('cannot parse ' .. reply) end
function spin(reply) while true do end end
function hog(reply) return #string.rep(reply, 1 << 28) end
not_a_function = 42
)";

struct Parsers {
  Sandbox sandbox;
  explicit Parsers(int instructions = 100000, std::uint32_t memory_mb = 4) {
    SandboxOptions options;
    options.instructions = instructions;
    options.memory_mb = memory_mb;
    REQUIRE(sandbox.open(options));
    REQUIRE(sandbox.load_text(kParsers, "parsers.lua"));
  }
};

}  // namespace

TEST_SUITE("lua_sandbox.reply_parser") {

TEST_CASE("a reply parses to a number, a list of numbers, a string or nothing") {
  Parsers p;
  auto number = call_parser(p.sandbox, "volts", "+1.250E-3\r\n");
  REQUIRE_MESSAGE(number, number.error().what);
  REQUIRE(std::holds_alternative<double>(*number));
  CHECK(std::get<double>(*number) == doctest::Approx(1.25e-3));

  auto list = call_parser(p.sandbox, "triple", "1.5,-2,3e2");
  REQUIRE_MESSAGE(list, list.error().what);
  REQUIRE(std::holds_alternative<std::vector<double>>(*list));
  CHECK(std::get<std::vector<double>>(*list) == std::vector<double>{1.5, -2.0, 300.0});

  auto text = call_parser(p.sandbox, "ident", "KEITHLEY INSTRUMENTS,MODEL 2000,123,A02");
  REQUIRE_MESSAGE(text, text.error().what);
  REQUIRE(std::holds_alternative<std::string>(*text));
  CHECK(std::get<std::string>(*text) == "KEITHLEY INSTRUMENTS");

  auto none = call_parser(p.sandbox, "nothing", "");
  REQUIRE_MESSAGE(none, none.error().what);
  CHECK(std::holds_alternative<std::monostate>(*none));

  auto empty = call_parser(p.sandbox, "triple", "");
  REQUIRE_MESSAGE(empty, empty.error().what);
  CHECK(std::get<std::vector<double>>(*empty).empty());
}

TEST_CASE("a reply with embedded zero bytes reaches the parser whole") {
  Parsers p;
  REQUIRE(p.sandbox.load_text("function len(reply) return #reply end", "len.lua"));
  auto length = call_parser(p.sandbox, "len", std::string_view("a\0b\0c", 5));
  REQUIRE_MESSAGE(length, length.error().what);
  CHECK(std::get<double>(*length) == 5.0);
}

TEST_CASE("every failure is an error and the sandbox goes on parsing") {
  Parsers p;
  struct Probe {
    const char* function;
    const char* error;
  };
  const Probe probes[] = {
      {"missing", "parsers.lua defines no global function 'missing' (it is nil)"},
      {"not_a_function", "parsers.lua defines no global function 'not_a_function' (it is number)"},
      {"flag", "parsers.lua: flag returned a boolean; expected a number, a list of numbers, a string or nil"},
      {"holes", "parsers.lua: holes returned a list whose element 2 is a string, not a number"},
      {"fails", "parsers.lua:12: cannot parse OFF"},
      {"spin", "parsers.lua:13: instruction budget of 100000 exceeded in one call"},
      {"hog", "parsers.lua: not enough memory: the script's heap reached memory_mb = 4 MiB"},
  };
  for (const Probe& probe : probes) {
    const std::string function = probe.function;
    CAPTURE(function);
    auto reply = call_parser(p.sandbox, probe.function, "OFF");
    REQUIRE_FALSE(reply);
    CHECK_MESSAGE(contains(reply.error().what, probe.error), reply.error().what);
    CHECK(lua_gettop(p.sandbox.state()) == 0);
    auto after = call_parser(p.sandbox, "volts", "2.5");
    REQUIRE_MESSAGE(after, after.error().what);
    CHECK(std::get<double>(*after) == 2.5);
  }
}

TEST_CASE("a runtime error carries a traceback") {
  Parsers p;
  auto reply = call_parser(p.sandbox, "fails", "x");
  REQUIRE_FALSE(reply);
  CHECK_MESSAGE(contains(reply.error().what, "stack traceback:"), reply.error().what);
}

}  // TEST_SUITE

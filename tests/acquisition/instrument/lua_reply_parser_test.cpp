// Lua reply parsers in a real bounded Lua state: what a function returns becomes a number, a list,
// text or a mismatch; errors, a blown budget and a full heap fail the one reply and leave the
// parser working; a script and its functions are checked up front.
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "scratch_dir.hpp"
#include "weir/instrument/lua_reply_parser.hpp"

using weir::acq::ParsedReply;
using weir::acq::ParseStatus;
using weir::acq::ReplyKind;

namespace {

constexpr const char* kParsers = R"lua(-- reply parsers for the tests
function volts(reply) return tonumber(reply:match("VOLT:(%S+);")) end
function pair(reply)
  local v, t = reply:match("VOLT:(%S+);TEMP:(%S+)")
  return { tonumber(v), tonumber(t) }
end
function state(reply) return reply:match("STAT:(%a+)") end
function flag(reply) return true end
function mixed(reply) return { 1, "two" } end
function explode(reply)
  if reply:find("bad") then error("cannot read '" .. reply .. "'") end
  return 1
end
function spin(reply)
  if reply == "loop" then while true do end end
  return 2
end
function hog(reply)
  if reply ~= "hog" then return 3 end
  local t = {}
  for i = 1, 1e9 do t[i] = string.rep("x", 1024) .. i end
end
function many(reply) local t = {} for i = 1, 100 do t[i] = i end return t end
)lua";

struct Scripts {
  weir::test::ScratchDir dir{"luareply"};
  std::string path = dir.file("parsers.lua");
  Scripts() { std::ofstream(path) << kParsers; }
};

std::unique_ptr<weir::acq::ReplyParser> make(const weir::acq::LuaReplyParserFactory& factory, const std::string& path,
                                             const std::string& function) {
  auto parser = weir::acq::make_reply_parser(*weir::acq::parse_reply_spec("lua:" + function), path, factory);
  REQUIRE_MESSAGE(parser, parser.error().what);
  return std::move(*parser);
}

bool has(const char* text, const std::string& part) { return std::string(text).find(part) != std::string::npos; }

}  // namespace

TEST_SUITE("acquisition.instrument.lua_reply") {

TEST_CASE("a Lua function's number, list and string become the reply's value") {
  Scripts s;
  const auto factory = weir::acq::lua_reply_parser_factory({});
  ParsedReply reply;
  reply.numbers.reserve(8);
  const double* storage = reply.numbers.data();
  const std::string line = "STAT:OK;VOLT:+1.234500E+00;TEMP:+23.50";

  auto volts = make(factory, s.path, "volts");
  CHECK(volts->parse(line, reply) == ParseStatus::ok);
  CHECK(reply.kind == ReplyKind::number);
  CHECK(reply.number == 1.2345);

  auto pair = make(factory, s.path, "pair");
  CHECK(pair->parse(line, reply) == ParseStatus::ok);
  CHECK(reply.kind == ReplyKind::numbers);
  CHECK(reply.numbers == std::vector<double>{1.2345, 23.5});
  CHECK(reply.numbers.data() == storage);  // filled in place

  auto state = make(factory, s.path, "state");
  CHECK(state->parse(line, reply) == ParseStatus::ok);
  CHECK(reply.kind == ReplyKind::text);
  CHECK(reply.text == "OK");

  CHECK(volts->parse("no volts here", reply) == ParseStatus::mismatch);  // nil: no value
  CHECK(state->parse("STAT:1", reply) == ParseStatus::mismatch);
}

TEST_CASE("a result of the wrong shape fails the reply, saying what came back") {
  Scripts s;
  const auto factory = weir::acq::lua_reply_parser_factory({});
  ParsedReply reply;
  reply.numbers.reserve(8);
  auto flag = make(factory, s.path, "flag");
  CHECK(flag->parse("x", reply) == ParseStatus::failed);
  CHECK_MESSAGE(has(flag->last_error(), "parsers.lua: flag returned a boolean; expected a number"), flag->last_error());
  auto mixed = make(factory, s.path, "mixed");
  CHECK(mixed->parse("x", reply) == ParseStatus::failed);
  CHECK_MESSAGE(has(mixed->last_error(), "element 2 is a string, not a number"), mixed->last_error());
  auto many = make(factory, s.path, "many");
  CHECK(many->parse("x", reply) == ParseStatus::too_many);  // 100 numbers, room for 8
  CHECK(reply.numbers.capacity() == 8);
}

TEST_CASE("an error, an endless loop and a heap that fills fail one reply each; the parser goes on") {
  Scripts s;
  const auto factory = weir::acq::lua_reply_parser_factory({.memory_mb = 4, .instructions = 100'000});
  ParsedReply reply;
  auto explode = make(factory, s.path, "explode");
  CHECK(explode->parse("bad reply", reply) == ParseStatus::failed);
  CHECK_MESSAGE(has(explode->last_error(), "parsers.lua:11: cannot read 'bad reply'"), explode->last_error());
  CHECK(explode->parse("fine", reply) == ParseStatus::ok);
  CHECK(reply.number == 1);

  auto spin = make(factory, s.path, "spin");
  CHECK(spin->parse("loop", reply) == ParseStatus::failed);
  CHECK_MESSAGE(has(spin->last_error(), "instruction budget of 100000 exceeded on one reply"), spin->last_error());
  CHECK(spin->parse("fine", reply) == ParseStatus::ok);
  CHECK(reply.number == 2);

  auto hog = make(factory, s.path, "hog");
  CHECK(hog->parse("hog", reply) == ParseStatus::failed);
  CHECK_MESSAGE(has(hog->last_error(), "not enough memory"), hog->last_error());
  CHECK(hog->parse("fine", reply) == ParseStatus::ok);
  CHECK(reply.number == 3);
  CHECK(explode->parse("fine again", reply) == ParseStatus::ok);  // the shared state survived all of it
}

TEST_CASE("a missing script, a script that does not load and a missing function are refused by name") {
  Scripts s;
  const auto factory = weir::acq::lua_reply_parser_factory({});
  const auto spec = *weir::acq::parse_reply_spec("lua:nosuch");
  auto missing_function = weir::acq::make_reply_parser(spec, s.path, factory);
  REQUIRE_FALSE(missing_function);
  CHECK_MESSAGE(missing_function.error().what.find("defines no global function 'nosuch' (it is nil)") != std::string::npos,
                missing_function.error().what);
  auto missing_file = weir::acq::make_reply_parser(spec, s.dir.file("absent.lua"), factory);
  REQUIRE_FALSE(missing_file);
  CHECK_MESSAGE(missing_file.error().what.find("absent.lua") != std::string::npos, missing_file.error().what);
  std::ofstream(s.dir.file("broken.lua")) << "function volts(reply)\n  return = 1\nend\n";
  auto broken = weir::acq::make_reply_parser(spec, s.dir.file("broken.lua"), factory);
  REQUIRE_FALSE(broken);
  CHECK_MESSAGE(broken.error().what.find("broken.lua:2:") != std::string::npos, broken.error().what);

  weir::acq::InstrumentOptions o;
  o.script = s.path;
  weir::acq::QuerySpec q;
  q.send = "STAT?";
  q.key = "k";
  q.reply = "lua:volts";
  o.queries.push_back(q);
  CHECK(weir::acq::check_lua_replies(o));
  q.send = "MEAS?";
  q.key = "m";
  q.reply = "lua:nosuch";
  o.queries.push_back(q);
  auto checked = weir::acq::check_lua_replies(o);
  REQUIRE_FALSE(checked);
  CHECK_MESSAGE(checked.error().what.find("query 2 ('MEAS?'): reply 'lua:nosuch': ") == 0, checked.error().what);
}

}  // TEST_SUITE

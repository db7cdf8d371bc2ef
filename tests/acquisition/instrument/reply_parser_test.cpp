#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <string>

#include "weir/instrument/reply_parser.hpp"

using weir::acq::ParsedReply;
using weir::acq::ParseStatus;
using weir::acq::ReplyKind;

TEST_SUITE("acquisition.instrument.reply_parser") {

TEST_CASE("a number reply takes SCPI's forms and refuses anything else") {
  double v = 0;
  CHECK(weir::acq::parse_number("+1.25E-03", v) == ParseStatus::ok);
  CHECK(v == doctest::Approx(1.25e-3));
  CHECK(weir::acq::parse_number("  -7 \r", v) == ParseStatus::ok);
  CHECK(v == -7);
  CHECK(weir::acq::parse_number("9.9E37", v) == ParseStatus::ok);
  CHECK(v == doctest::Approx(9.9e37));
  CHECK(weir::acq::parse_number("nan", v) == ParseStatus::ok);
  CHECK(std::isnan(v));
  v = 42;
  for (const char* bad : {"", " ", "1.5 V", "1,2", "+-1", "++1", "#garbage", "1e999", "0x10", "1.2.3"}) {
    CAPTURE(bad);
    CHECK(weir::acq::parse_number(bad, v) == ParseStatus::mismatch);
  }
  CHECK(v == 42);  // a mismatch leaves the value alone
}

TEST_CASE("a numbers reply splits at commas and whitespace, and refuses stray text") {
  std::array<double, 4> out{};
  std::size_t n = 0;
  CHECK(weir::acq::parse_numbers("1,2,3", out, n) == ParseStatus::ok);
  CHECK(n == 3);
  CHECK(out[2] == 3);
  CHECK(weir::acq::parse_numbers(" +1.5E+00 , -2\t3 ", out, n) == ParseStatus::ok);
  CHECK(n == 3);
  CHECK(out[0] == 1.5);
  CHECK(out[1] == -2);
  CHECK(weir::acq::parse_numbers("", out, n) == ParseStatus::ok);
  CHECK(n == 0);
  CHECK(weir::acq::parse_numbers("1,2,3,4,5", out, n) == ParseStatus::too_many);
  for (const char* bad : {"1,,2", "1,", ",1", "1;2", "1x", "a,b"}) {
    CAPTURE(bad);
    CHECK(weir::acq::parse_numbers(bad, out, n) == ParseStatus::mismatch);
  }
}

TEST_CASE("parsers made from a reply spec fill a reused reply without growing it") {
  ParsedReply reply;
  reply.numbers.reserve(8);
  const double* storage = reply.numbers.data();
  auto numbers = weir::acq::make_reply_parser(*weir::acq::parse_reply_spec("numbers"));
  REQUIRE(numbers);
  CHECK((*numbers)->parse("1 2 3", reply) == ParseStatus::ok);
  CHECK(reply.kind == ReplyKind::numbers);
  CHECK(reply.numbers.size() == 3);
  CHECK(reply.numbers.data() == storage);
  auto text = weir::acq::make_reply_parser(*weir::acq::parse_reply_spec("text"));
  REQUIRE(text);
  CHECK((*text)->parse("WEIR,FAKE-DMM,0,1.0\r", reply) == ParseStatus::ok);
  CHECK(reply.text == "WEIR,FAKE-DMM,0,1.0");
  auto number = weir::acq::make_reply_parser(*weir::acq::parse_reply_spec("number"));
  REQUIRE(number);
  CHECK((*number)->parse("garbage", reply) == ParseStatus::mismatch);
}

TEST_CASE("reply specs: unknown kinds are refused, and lua names its missing pieces") {
  auto unknown = weir::acq::parse_reply_spec("float");
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().what.find("'float'") != std::string::npos);
  CHECK_FALSE(weir::acq::parse_reply_spec("lua:"));
  CHECK_FALSE(weir::acq::parse_reply_spec("lua:1abc"));
  auto lua = weir::acq::parse_reply_spec("lua:parse_status");
  REQUIRE(lua);
  CHECK(lua->kind == ReplyKind::lua);
  CHECK(lua->function == "parse_status");
  auto no_script = weir::acq::make_reply_parser(*lua);
  REQUIRE_FALSE(no_script);
  CHECK(no_script.error().what.find("script") != std::string::npos);
  auto no_lua = weir::acq::make_reply_parser(*lua, "parse.lua");
  REQUIRE_FALSE(no_lua);
  CHECK(no_lua.error().what.find("not available") != std::string::npos);
}

}  // TEST_SUITE

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

#include "weir/tools/output.hpp"

using namespace weir::tools;

TEST_SUITE("tools.output") {

TEST_CASE("json_quote escapes quotes, backslashes and control characters") {
  CHECK(json_quote("plain") == "\"plain\"");
  CHECK(json_quote("a\"b\\c") == R"("a\"b\\c")");
  CHECK(json_quote("\n\t\r\b\f") == R"("\n\t\r\b\f")");
  CHECK(json_quote(std::string("\x01\x1f", 2)) == R"("\u0001\u001f")");
  CHECK(json_quote(std::string("a\0b", 3)) == R"("a\u0000b")");
}

TEST_CASE("json_quote keeps valid UTF-8 and replaces invalid bytes with U+FFFD") {
  CHECK(json_quote("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80") == "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
  const std::string replacement = "\xEF\xBF\xBD";
  SUBCASE("stray continuation byte") { CHECK(json_quote("\x80") == "\"" + replacement + "\""); }
  SUBCASE("truncated sequence") { CHECK(json_quote("a\xe2\x82") == "\"a" + replacement + replacement + "\""); }
  SUBCASE("overlong encoding") { CHECK(json_quote("\xc0\xaf") == "\"" + replacement + replacement + "\""); }
  SUBCASE("surrogate") { CHECK(json_quote("\xed\xa0\x80") == "\"" + replacement + replacement + replacement + "\""); }
  SUBCASE("past U+10FFFF") {
    CHECK(json_quote("\xf4\x90\x80\x80") == "\"" + replacement + replacement + replacement + replacement + "\"");
  }
}

TEST_CASE("JsonObject writes fields in order with typed values") {
  JsonArray pids;
  pids.number(1).number(2U);
  JsonObject out;
  out.text("name", "x").number("n", -3).number("u", std::uint64_t{18446744073709551615ULL}).boolean("ok", true)
      .real("r", 0.5).real("nan", std::nan("")).raw("pids", pids.str());
  CHECK(out.str() == R"({"name":"x","n":-3,"u":18446744073709551615,"ok":true,"r":0.5,"nan":null,"pids":[1,2]})");
  CHECK(JsonObject{}.str() == "{}");
  CHECK(JsonArray{}.str() == "[]");
}

TEST_CASE("iso8601_utc formats nanoseconds since the epoch with milliseconds") {
  CHECK(iso8601_utc(0) == "1970-01-01T00:00:00.000Z");
  CHECK(iso8601_utc(1'700'000'000'123'456'789ULL) == "2023-11-14T22:13:20.123Z");
}

TEST_CASE("human_bytes uses binary units with one decimal") {
  CHECK(human_bytes(0) == "0 B");
  CHECK(human_bytes(1023) == "1023 B");
  CHECK(human_bytes(1024) == "1.0 KiB");
  CHECK(human_bytes(1536) == "1.5 KiB");
  CHECK(human_bytes(4390912) == "4.2 MiB");
  CHECK(human_bytes(1ULL << 40) == "1.0 TiB");
}

TEST_CASE("octal_mode prints four octal digits") {
  CHECK(octal_mode(0600) == "0600");
  CHECK(octal_mode(0) == "0000");
}

}  // TEST_SUITE

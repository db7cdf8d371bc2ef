#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "weir/instrument/line_transport.hpp"

using weir::acq::LineBuffer;
using weir::acq::LineFraming;
using weir::acq::LineStatus;

TEST_SUITE("acquisition.instrument.line_buffer") {

TEST_CASE("lines split at the terminator, across appends, and the terminator is removed") {
  LineFraming f;
  f.in_terminator = "\r\n";
  LineBuffer b(f);
  std::string_view line;
  CHECK(b.next(line) == LineStatus::empty);
  CHECK(b.append("1.25\r") == 5);
  CHECK(b.next(line) == LineStatus::partial);
  CHECK(b.append("\nWEIR,DMM\r\nrest") == 15);
  REQUIRE(b.next(line) == LineStatus::line);
  CHECK(line == "1.25");
  REQUIRE(b.next(line) == LineStatus::line);
  CHECK(line == "WEIR,DMM");
  CHECK(b.next(line) == LineStatus::partial);
  CHECK(b.buffered() == 4);
  b.clear();
  CHECK(b.next(line) == LineStatus::empty);
}

TEST_CASE("a reply longer than max_reply_bytes without a terminator is too_long, and the buffer never grows") {
  LineFraming f;
  f.max_reply_bytes = 8;
  LineBuffer b(f);
  std::string_view line;
  CHECK(b.append("12345678") == 8);
  CHECK(b.next(line) == LineStatus::partial);  // the terminator may still come
  CHECK(b.append("9abcdef") == 1);             // room for exactly one terminator byte
  CHECK(b.next(line) == LineStatus::too_long);
  CHECK(b.buffered() == 0);
  SUBCASE("a line of exactly max_reply_bytes is fine") {
    CHECK(b.append("12345678\n") == 9);
    REQUIRE(b.next(line) == LineStatus::line);
    CHECK(line == "12345678");
  }
}

TEST_CASE("framing refuses empty or long terminators and a zero reply limit, naming the setting") {
  LineFraming f;
  CHECK(weir::acq::validate(f));
  f.in_terminator = "";
  auto bad = weir::acq::validate(f);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().what.find("in_terminator") != std::string::npos);
  f.in_terminator = "\n";
  f.max_reply_bytes = 0;
  CHECK_FALSE(weir::acq::validate(f));
  CHECK(weir::acq::escape_text("a\r\n\x01") == "a\\r\\n\\x01");
}

}  // TEST_SUITE

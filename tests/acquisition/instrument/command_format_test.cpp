#include <doctest/doctest.h>

#include <array>
#include <string>
#include <string_view>

#include "weir/instrument/command_format.hpp"

using weir::acq::CommandFormat;

namespace {

std::string fill_number(const CommandFormat& f, double v) {
  std::array<char, 64> out{};
  std::size_t n = 0;
  return f.format_number(v, out, n) ? std::string(out.data(), n) : "<refused>";
}

std::string fill_text(const CommandFormat& f, std::string_view v) {
  std::array<char, 64> out{};
  std::size_t n = 0;
  return f.format_text(v, out, n) ? std::string(out.data(), n) : "<refused>";
}

}  // namespace

TEST_SUITE("acquisition.instrument.command_format") {

TEST_CASE("a format with one conversion is filled from numbers and from text that is a number") {
  auto volt = CommandFormat::parse("VOLT %.3f");
  REQUIRE(volt);
  CHECK(fill_number(*volt, 1.5) == "VOLT 1.500");
  CHECK(fill_text(*volt, "2.25") == "VOLT 2.250");
  CHECK(fill_text(*volt, "high") == "<refused>");
  auto count = CommandFormat::parse("SAMP:COUN %d;*OPC 100%%");
  REQUIRE(count);
  CHECK(fill_number(*count, 9.6) == "SAMP:COUN 10;*OPC 100%");
  auto mode = CommandFormat::parse("MODE %s");
  REQUIRE(mode);
  CHECK(fill_text(*mode, "FAST") == "MODE FAST");
  CHECK(fill_number(*mode, 2) == "MODE 2");
  auto plain = CommandFormat::parse("OUTP ON");
  REQUIRE(plain);
  CHECK(plain->arg() == CommandFormat::Arg::none);
  CHECK(fill_text(*plain, "anything") == "OUTP ON");
}

TEST_CASE("formats with two conversions, unknown letters, '*' widths or NUL bytes are refused") {
  for (const std::string_view bad : {std::string_view("V %g %g"), std::string_view("V %n"), std::string_view("V %*d"),
                                     std::string_view("V %"), std::string_view("V %ld"),
                                     std::string_view("V %.\0f", 6), std::string_view("V %\0", 4)}) {
    CAPTURE(std::string(bad));
    CHECK_FALSE(CommandFormat::parse(bad));
  }
  auto two = CommandFormat::parse("V %g %g");
  CHECK(two.error().what == "command format \"V %g %g\": more than one conversion; a key gives one value");
}

TEST_CASE("a width or precision past kMaxConversionWidth is refused (snprintf would pad for ever)") {
  auto wide = CommandFormat::parse("V %#000000000002000000099E");  // found by the fuzz target
  REQUIRE_FALSE(wide);
  CHECK(wide.error().what.find("a field width larger than 256") != std::string::npos);
  auto precise = CommandFormat::parse("V %.99999999999999999999f");
  REQUIRE_FALSE(precise);
  CHECK(precise.error().what.find("a precision larger than 256") != std::string::npos);
  CHECK(CommandFormat::parse("V %256.256f"));
}

TEST_CASE("a value too long for the command buffer is refused, never cut") {
  auto f = CommandFormat::parse("TEXT %s");
  REQUIRE(f);
  CHECK(fill_text(*f, std::string(100, 'x')) == "<refused>");
  auto wide = CommandFormat::parse("V %80.3f");
  REQUIRE(wide);
  CHECK(fill_number(*wide, 1) == "<refused>");
}

}  // TEST_SUITE

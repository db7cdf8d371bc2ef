#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "weir/tools/value_codec.hpp"

using namespace weir::tools;
using weir::core::ValueType;

namespace {

std::vector<std::byte> bytes_of(std::string_view text) {
  const auto* first = reinterpret_cast<const std::byte*>(text.data());
  return {first, first + text.size()};
}

template <class T>
std::vector<std::byte> scalar(T value) {
  std::vector<std::byte> out(sizeof value);
  std::memcpy(out.data(), &value, sizeof value);
  return out;
}

}  // namespace

TEST_SUITE("tools.value_codec") {

TEST_CASE("parse_u64 takes decimal and 0x hex and refuses signs, junk and overflow") {
  CHECK(parse_u64("0") == 0U);
  CHECK(parse_u64("123") == 123U);
  CHECK(parse_u64("0x7B") == 123U);
  CHECK(parse_u64("18446744073709551615") == std::numeric_limits<std::uint64_t>::max());
  CHECK_FALSE(parse_u64("18446744073709551616"));
  CHECK_FALSE(parse_u64("-1"));
  CHECK_FALSE(parse_u64("12a"));
  CHECK_FALSE(parse_u64(""));
  CHECK_FALSE(parse_u64("0x"));
}

TEST_CASE("parse_i64 covers the whole signed range") {
  CHECK(parse_i64("-5") == -5);
  CHECK(parse_i64("+5") == 5);
  CHECK(parse_i64("-0x10") == -16);
  CHECK(parse_i64("9223372036854775807") == std::numeric_limits<std::int64_t>::max());
  CHECK(parse_i64("-9223372036854775808") == std::numeric_limits<std::int64_t>::min());
  CHECK_FALSE(parse_i64("9223372036854775808"));
  CHECK_FALSE(parse_i64("-9223372036854775809"));
  CHECK_FALSE(parse_i64("--1"));
}

TEST_CASE("parse_operand takes negative decimals as two's complement") {
  CHECK(parse_operand("-1") == std::numeric_limits<std::uint64_t>::max());
  CHECK(parse_operand("0xff") == 255U);
  CHECK(parse_operand("18446744073709551615") == std::numeric_limits<std::uint64_t>::max());
  CHECK_FALSE(parse_operand("x"));
}

TEST_CASE("parse_f64 and parse_mode accept only whole valid text") {
  CHECK(parse_f64("1.5") == 1.5);
  CHECK(parse_f64("-2e3") == -2000.0);
  CHECK_FALSE(parse_f64("1.5x"));
  CHECK(parse_mode("0660") == 0660U);
  CHECK(parse_mode("644") == 0644U);
  CHECK_FALSE(parse_mode("0999"));
  CHECK_FALSE(parse_mode("1777"));
}

TEST_CASE("hex round-trips and decode_hex says what is wrong") {
  const std::vector<std::byte> raw = bytes_of(std::string("\x00\xff\x10", 3));
  CHECK(encode_hex(raw) == "00ff10");
  CHECK(decode_hex("00FF10").value() == raw);
  CHECK(decode_hex("0x00 ff\n10").value() == raw);
  CHECK(decode_hex("").value().empty());
  const auto odd = decode_hex("abc");
  REQUIRE_FALSE(odd);
  CHECK(odd.error().what.find("odd") != std::string::npos);
  const auto junk = decode_hex("a g");
  REQUIRE_FALSE(junk);
  CHECK(junk.error().what.find("\"g\" at offset 2") != std::string::npos);
}

TEST_CASE("encode_value stores each type as the CLI user wrote it") {
  CHECK(encode_value("hi", ValueType::text, false).value() == bytes_of("hi"));
  CHECK(encode_value("-7", ValueType::i64, false).value() == scalar(std::int64_t{-7}));
  CHECK(encode_value("0x10", ValueType::u64, false).value() == scalar(std::uint64_t{16}));
  CHECK(encode_value("0.25", ValueType::f64, false).value() == scalar(0.25));
  CHECK(encode_value("beef", ValueType::bytes, true).value() == bytes_of("\xbe\xef"));
  CHECK_FALSE(encode_value("-1", ValueType::u64, false));
  CHECK_FALSE(encode_value("seven", ValueType::i64, false));
  CHECK_FALSE(encode_value("beef", ValueType::text, true));
}

TEST_CASE("values print as text for people and as JSON for scripts") {
  CHECK(value_to_text(ValueType::text, bytes_of("a b")) == "a b");
  CHECK(value_to_text(ValueType::bytes, bytes_of("\x01\xab")) == "01ab");
  CHECK(value_to_text(ValueType::i64, scalar(std::int64_t{-3})) == "-3");
  CHECK(value_to_text(ValueType::u64, scalar(std::numeric_limits<std::uint64_t>::max())) == "18446744073709551615");
  CHECK(value_to_text(ValueType::f64, scalar(0.1)) == "0.1");
  CHECK(value_to_text(ValueType::vector, scalar(std::uint64_t{0x4000'0000'3f80'0000ULL})) == "1 2");
  CHECK(value_to_json(ValueType::text, bytes_of("q\"")) == R"("q\"")");
  CHECK(value_to_json(ValueType::bytes, bytes_of("\xff")) == R"("ff")");
  CHECK(value_to_json(ValueType::none, {}) == "null");
  CHECK(value_to_json(ValueType::f64, scalar(std::numeric_limits<double>::infinity())) == "null");
  CHECK(value_to_json(ValueType::vector, scalar(std::uint64_t{0x4000'0000'3f80'0000ULL})) == "[1,2]");
  CHECK(integer_to_text(ValueType::i64, std::numeric_limits<std::uint64_t>::max()) == "-1");
  CHECK(integer_to_text(ValueType::u64, std::numeric_limits<std::uint64_t>::max()) == "18446744073709551615");
}

TEST_CASE("arrays encode from numbers and print as numbers, rows on lines, in every element dtype") {
  using weir::core::ArrayShape;
  using weir::core::Dtype;
  const auto i16 = encode_array("-3, 4 -32768 32767", Dtype::i16, "2x2").value();
  CHECK(i16.shape == ArrayShape{Dtype::i16, 2, {2, 2}});
  CHECK(array_to_text(i16.shape, i16.bytes) == "-3 4\n-32768 32767");
  CHECK(array_to_json(i16.shape, i16.bytes) == "[[-3,4],[-32768,32767]]");
  CHECK(array_shape_text(i16.shape) == "i16[2x2]");
  const auto c64 = encode_array("1 -2 0.5 nan", Dtype::c64, "").value();
  CHECK(c64.shape == ArrayShape{Dtype::c64, 1, {2, 0}});
  CHECK(array_to_json(c64.shape, c64.bytes) == "[[1,-2],[0.5,null]]");
  CHECK(array_to_text(c64.shape, c64.bytes) == "1,-2 0.5,nan");
  const auto f32 = encode_array("0.1 1e3", Dtype::f32, "2").value();
  CHECK(array_to_json(f32.shape, f32.bytes) == "[0.10000000149011612,1000]");
  CHECK_FALSE(encode_array("1 2 3", Dtype::u8, "2x2"));
  CHECK_FALSE(encode_array("-1", Dtype::u32, ""));
  CHECK_FALSE(encode_array("128", Dtype::i8, ""));
  CHECK_FALSE(encode_array("", Dtype::f64, ""));
  CHECK_FALSE(encode_array("1 2", Dtype::f64, "0x2"));
  CHECK_FALSE(encode_array("1 2 3", Dtype::c64, ""));
  // Bytes that do not match their shape print as hex rather than as numbers.
  CHECK(array_to_text(ArrayShape{Dtype::u32, 1, {2, 0}}, std::vector<std::byte>(3)) == "000000");
}

}  // TEST_SUITE

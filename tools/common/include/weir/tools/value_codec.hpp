#pragma once
// Turning command-line text into stored values and stored values back into text or JSON.
// Pure functions: no arena access, so they are easy to test on their own.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "weir/core/arena_layout.hpp"
#include "weir/core/error.hpp"
#include "weir/core/kv_store.hpp"

namespace weir::tools {

/// The value types `weir set --type` accepts, by name.
inline constexpr std::string_view kSettableTypeNames[] = {"text", "bytes", "i64", "u64", "f64"};

/// Parses "123" or "0x7b" (whole string, no sign). Empty optional on anything else or overflow.
[[nodiscard]] std::optional<std::uint64_t> parse_u64(std::string_view text);
/// Parses "-5", "+5", "5", "0x10" or "-0x10" into the signed 64-bit range.
[[nodiscard]] std::optional<std::int64_t> parse_i64(std::string_view text);
/// Parses an operand for the bitwise commands: any u64, or a negative i64 taken as two's complement.
[[nodiscard]] std::optional<std::uint64_t> parse_operand(std::string_view text);
/// Parses a decimal or scientific double ("1.5", "-2e10", "inf", "nan").
[[nodiscard]] std::optional<double> parse_f64(std::string_view text);
/// Parses octal permission bits such as "0660" or "660"; at most 0777.
[[nodiscard]] std::optional<std::uint32_t> parse_mode(std::string_view text);

/// Maps "text", "bytes", "i64", "u64" or "f64" to its ValueType.
[[nodiscard]] std::optional<core::ValueType> parse_value_type(std::string_view name);

/// Hex digits, two per byte, lowercase: "00ff10".
[[nodiscard]] std::string encode_hex(std::span<const std::byte> bytes);
/// Decodes hex digits; an optional "0x" prefix and ASCII whitespace anywhere are ignored.
/// Fails with Errc::invalid_argument naming the offending character or an odd digit count.
[[nodiscard]] core::Result<std::vector<std::byte>> decode_hex(std::string_view text);

/// Encodes command-line text as the stored bytes of `type` (integers and doubles as 8 native-order
/// bytes, text verbatim). With `hex`, the text is hex-decoded (only for ValueType::bytes).
/// Fails with Errc::invalid_argument saying why the text is not a value of that type.
[[nodiscard]] core::Result<std::vector<std::byte>> encode_value(std::string_view text, core::ValueType type,
                                                                bool hex);

/// A stored value as people read it: text verbatim, numbers in decimal, bytes in hex,
/// vectors as space-separated floats, an empty (type none) value as "".
[[nodiscard]] std::string value_to_text(core::ValueType type, std::span<const std::byte> bytes);
/// A stored value as one JSON value: a string for text and bytes (hex), a number for
/// i64/u64/f64, an array of numbers for vectors, null for type none.
[[nodiscard]] std::string value_to_json(core::ValueType type, std::span<const std::byte> bytes);
/// A value as one short line for people (`weir watch`): text quoted as JSON and cut to 60
/// characters on a UTF-8 boundary ("…" marks the cut), numbers as numbers, bytes as the hex of
/// the first 16 plus the length, vectors as their first floats plus the count, arrays as their size.
[[nodiscard]] std::string value_preview(core::ValueType type, std::span<const std::byte> bytes);

/// An array's element dtype and dims as people read them: "u32[1024]", "f64[3x4]".
[[nodiscard]] std::string array_shape_text(const core::ArrayShape& shape);
/// An array value's elements as text: numbers separated by spaces, a rank-2 array one row per line
/// (c64 elements as "re,im"). Bytes that do not match the shape print as hex.
[[nodiscard]] std::string array_to_text(const core::ArrayShape& shape, std::span<const std::byte> bytes);
/// An array value as one JSON array of numbers (rank 2: an array of rows; c64: [re, im] pairs;
/// non-finite floats as null). Bytes that do not match the shape give a hex string.
[[nodiscard]] std::string array_to_json(const core::ArrayShape& shape, std::span<const std::byte> bytes);

/// The element dtype and shape of an array `weir set --array` writes, and its bytes.
struct EncodedArray {
  core::ArrayShape shape;
  std::vector<std::byte> bytes;
};
/// Encodes numbers separated by spaces, commas or newlines as an array of `elem` (c64: two numbers,
/// re and im, per element). `shape_text` is "N" or "RxC" (also "R,C"); empty means rank 1 of the
/// numbers given. Fails with Errc::invalid_argument naming a number that is not one or does not fit
/// the dtype, or a count that does not match the shape.
[[nodiscard]] core::Result<EncodedArray> encode_array(std::string_view text, core::Dtype elem,
                                                      std::string_view shape_text);

/// The integer an atomic op returned, printed per the key's type (i64 signed, u64 unsigned).
[[nodiscard]] std::string integer_to_text(core::ValueType type, std::uint64_t bits);

// Reading stored values where nothing may allocate (servers' update loops: weir-epics, weir-tango).
/// A stored number (f64, i64, u64 at `v`) as a double; false for any other type.
[[nodiscard]] bool value_as_f64(core::ValueType type, const std::byte* v, double& out) noexcept;
/// A stored number as an i64: a u64 capped at INT64_MAX, an f64 rounded (false when not finite).
[[nodiscard]] bool value_as_i64(core::ValueType type, const std::byte* v, std::int64_t& out) noexcept;
/// A stored value as text: text and bytes as they are (a view of `v`, `length` bytes), numbers
/// written into `scratch`; false for other types or a scratch too small.
[[nodiscard]] bool value_as_text(core::ValueType type, const std::byte* v, std::uint32_t length, std::span<char> scratch,
                                 std::string_view& out) noexcept;
/// Sample `i` of a block of `dtype` as a double (c64: its real part).
[[nodiscard]] double sample_as_f64(const std::byte* data, core::Dtype dtype, std::size_t i) noexcept;

}  // namespace weir::tools

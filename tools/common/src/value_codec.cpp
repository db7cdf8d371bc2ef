#include "weir/tools/value_codec.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <system_error>
#include <type_traits>

#include <fmt/format.h>

#include "weir/core/channel.hpp"
#include "weir/tools/output.hpp"

namespace weir::tools {
namespace {

using core::ValueType;

constexpr int kDecimalBase = 10;
constexpr int kHexBase = 16;
constexpr int kOctalBase = 8;
constexpr std::uint32_t kMaxModeBits = 0777;              // rwx for user, group and other
constexpr std::string_view kHexPrefix = "0x";
constexpr std::string_view kHexPrefixUpper = "0X";
constexpr std::string_view kHexDigits = "0123456789abcdef";
constexpr std::size_t kHexDigitsPerByte = 2;
constexpr unsigned kNibbleBits = 4;
constexpr unsigned kNibbleMask = 0xF;
constexpr std::size_t kScalarBytes = sizeof(std::uint64_t);  // integers and doubles take 8 bytes
constexpr std::size_t kVectorElementBytes = sizeof(float);
constexpr std::size_t kPreviewChars = 60;  // text and vector previews are cut to this many characters
constexpr std::size_t kPreviewBytes = 16;  // bytes previews show this many bytes in hex

bool strip_hex_prefix(std::string_view& text) {
  if (text.starts_with(kHexPrefix) || text.starts_with(kHexPrefixUpper)) {
    text.remove_prefix(kHexPrefix.size());
    return true;
  }
  return false;
}

template <class T>
std::optional<T> parse_whole(std::string_view text, int base) {
  if (text.empty()) return std::nullopt;
  T value{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value, base);
  if (ec != std::errc{} || ptr != end) return std::nullopt;
  return value;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + kDecimalBase;
  if (c >= 'A' && c <= 'F') return c - 'A' + kDecimalBase;
  return -1;
}

template <class T>
std::vector<std::byte> scalar_bytes(T value) {
  static_assert(sizeof(T) == kScalarBytes);
  std::vector<std::byte> out(kScalarBytes);
  std::memcpy(out.data(), &value, kScalarBytes);
  return out;
}

template <class T>
T scalar_from(std::span<const std::byte> bytes) {
  T value{};
  std::memcpy(&value, bytes.data(), std::min(bytes.size(), sizeof(T)));  // short values: zero-extended
  return value;
}

std::vector<float> vector_from(std::span<const std::byte> bytes) {
  std::vector<float> out(bytes.size() / kVectorElementBytes);
  std::memcpy(out.data(), bytes.data(), out.size() * kVectorElementBytes);
  return out;
}

std::string_view as_chars(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// Cuts text to kPreviewChars characters on a UTF-8 boundary, marking the cut with "…".
std::string cut_preview(std::string_view text) {
  std::size_t chars = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool starts_char = (static_cast<unsigned char>(text[i]) & 0xC0U) != 0x80U;
    if (starts_char && chars++ == kPreviewChars) return std::string(text.substr(0, i)) + "…";
  }
  return std::string(text);
}

}  // namespace

std::optional<std::uint64_t> parse_u64(std::string_view text) {
  const int base = strip_hex_prefix(text) ? kHexBase : kDecimalBase;
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) return std::nullopt;
  return parse_whole<std::uint64_t>(text, base);
}

std::optional<std::int64_t> parse_i64(std::string_view text) {
  bool negative = false;
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  const auto magnitude = parse_u64(text);
  if (!magnitude) return std::nullopt;
  constexpr auto kMaxPositive = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (!negative) {
    if (*magnitude > kMaxPositive) return std::nullopt;
    return static_cast<std::int64_t>(*magnitude);
  }
  if (*magnitude > kMaxPositive + 1) return std::nullopt;
  if (*magnitude == kMaxPositive + 1) return std::numeric_limits<std::int64_t>::min();
  return -static_cast<std::int64_t>(*magnitude);
}

std::optional<std::uint64_t> parse_operand(std::string_view text) {
  if (text.starts_with('-')) {
    const auto value = parse_i64(text);
    if (!value) return std::nullopt;
    return static_cast<std::uint64_t>(*value);  // two's complement, as the bitwise ops see it
  }
  if (text.starts_with('+')) text.remove_prefix(1);
  return parse_u64(text);
}

std::optional<double> parse_f64(std::string_view text) {
  if (text.starts_with('+')) text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc{} || ptr != end) return std::nullopt;
  return value;
}

std::optional<std::uint32_t> parse_mode(std::string_view text) {
  const auto mode = parse_whole<std::uint32_t>(text, kOctalBase);
  if (!mode || *mode > kMaxModeBits) return std::nullopt;
  return mode;
}

std::optional<ValueType> parse_value_type(std::string_view name) {
  if (name == "text") return ValueType::text;
  if (name == "bytes") return ValueType::bytes;
  if (name == "i64") return ValueType::i64;
  if (name == "u64") return ValueType::u64;
  if (name == "f64") return ValueType::f64;
  return std::nullopt;
}

std::string encode_hex(std::span<const std::byte> bytes) {
  std::string out;
  out.reserve(bytes.size() * kHexDigitsPerByte);
  for (const std::byte b : bytes) {
    const auto v = std::to_integer<unsigned>(b);
    out += kHexDigits[v >> kNibbleBits];
    out += kHexDigits[v & kNibbleMask];
  }
  return out;
}

core::Result<std::vector<std::byte>> decode_hex(std::string_view text) {
  strip_hex_prefix(text);
  std::vector<std::byte> out;
  out.reserve(text.size() / kHexDigitsPerByte);
  int high = -1;  // the pending first digit of a byte, or -1
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (is_space(c)) continue;
    const int v = hex_value(c);
    if (v < 0) {
      return core::fail(core::Errc::invalid_argument,
                        fmt::format("{} at offset {} is not a hex digit", json_quote(text.substr(i, 1)), i));
    }
    if (high < 0) {
      high = v;
    } else {
      out.push_back(static_cast<std::byte>((high << kNibbleBits) | v));
      high = -1;
    }
  }
  if (high >= 0) return core::fail(core::Errc::invalid_argument, "odd number of hex digits");
  return out;
}

core::Result<std::vector<std::byte>> encode_value(std::string_view text, ValueType type, bool hex) {
  const auto not_a = [&](std::string_view what) {
    return core::fail(core::Errc::invalid_argument, fmt::format("{} is not {}", json_quote(text), what));
  };
  if (hex) {
    if (type != ValueType::bytes) return core::fail(core::Errc::invalid_argument, "--hex is only for --type bytes");
    return decode_hex(text);
  }
  switch (type) {
    case ValueType::text:
    case ValueType::bytes: {
      const auto* first = reinterpret_cast<const std::byte*>(text.data());
      return std::vector<std::byte>(first, first + text.size());
    }
    case ValueType::i64: {
      const auto value = parse_i64(text);
      if (!value) return not_a("a signed 64-bit integer");
      return scalar_bytes(*value);
    }
    case ValueType::u64: {
      const auto value = parse_u64(text);
      if (!value) return not_a("an unsigned 64-bit integer");
      return scalar_bytes(*value);
    }
    case ValueType::f64: {
      const auto value = parse_f64(text);
      if (!value) return not_a("a floating-point number");
      return scalar_bytes(*value);
    }
    case ValueType::none:
    case ValueType::vector:
    case ValueType::array:  // needs a shape: encode_array
      break;
  }
  return core::fail(core::Errc::invalid_argument,
                    fmt::format("values of type {} cannot be set from the command line",
                                static_cast<unsigned>(type)));
}

std::string value_to_text(ValueType type, std::span<const std::byte> bytes) {
  switch (type) {
    case ValueType::none: return "";
    case ValueType::text: return std::string(as_chars(bytes));
    case ValueType::bytes: return encode_hex(bytes);
    case ValueType::i64: return fmt::format("{}", scalar_from<std::int64_t>(bytes));
    case ValueType::u64: return fmt::format("{}", scalar_from<std::uint64_t>(bytes));
    case ValueType::f64: return format_real(scalar_from<double>(bytes));
    case ValueType::vector: {
      std::string out;
      for (const float f : vector_from(bytes)) {
        if (!out.empty()) out += ' ';
        out += format_real(static_cast<double>(f));
      }
      return out;
    }
    case ValueType::array: break;  // needs its shape: array_to_text
  }
  return encode_hex(bytes);  // a type this build does not know: show the bytes
}

std::string value_to_json(ValueType type, std::span<const std::byte> bytes) {
  switch (type) {
    case ValueType::none: return "null";
    case ValueType::text: return json_quote(as_chars(bytes));
    case ValueType::bytes: return json_quote(encode_hex(bytes));
    case ValueType::i64:
    case ValueType::u64: return value_to_text(type, bytes);
    case ValueType::f64: {
      const auto value = scalar_from<double>(bytes);
      return std::isfinite(value) ? format_real(value) : "null";
    }
    case ValueType::vector: {
      JsonArray array;
      for (const float f : vector_from(bytes)) array.real(static_cast<double>(f));
      return array.str();
    }
    case ValueType::array: break;  // needs its shape: array_to_json
  }
  return json_quote(encode_hex(bytes));
}

std::string value_preview(ValueType type, std::span<const std::byte> bytes) {
  switch (type) {
    case ValueType::none: return "(empty)";
    case ValueType::text: return json_quote(cut_preview(as_chars(bytes)));
    case ValueType::bytes: {
      const std::string hex = encode_hex(bytes.first(std::min(bytes.size(), kPreviewBytes)));
      return fmt::format("0x{}{} ({} bytes)", hex, bytes.size() > kPreviewBytes ? "…" : "", bytes.size());
    }
    case ValueType::i64:
    case ValueType::u64:
    case ValueType::f64: return value_to_text(type, bytes);
    case ValueType::vector:
      return fmt::format("[{}] ({} floats)", cut_preview(value_to_text(type, bytes)), bytes.size() / sizeof(float));
    case ValueType::array: return fmt::format("(array, {} bytes)", bytes.size());
  }
  return fmt::format("({} bytes of an unknown type)", bytes.size());
}

namespace {

template <class T>
T element_at(std::span<const std::byte> bytes, std::uint64_t i) {
  T v{};
  std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
  return v;
}

// Element i of an array as JSON (text: the same, but "re,im" for c64 and "nan"/"inf" for floats).
std::string element_text(core::Dtype elem, std::span<const std::byte> bytes, std::uint64_t i, bool json) {
  const auto real = [json](double v) { return json && !std::isfinite(v) ? std::string("null") : format_real(v); };
  switch (elem) {
    case core::Dtype::i8: return fmt::format("{}", element_at<std::int8_t>(bytes, i));
    case core::Dtype::u8: return fmt::format("{}", element_at<std::uint8_t>(bytes, i));
    case core::Dtype::i16: return fmt::format("{}", element_at<std::int16_t>(bytes, i));
    case core::Dtype::u16: return fmt::format("{}", element_at<std::uint16_t>(bytes, i));
    case core::Dtype::i32: return fmt::format("{}", element_at<std::int32_t>(bytes, i));
    case core::Dtype::u32: return fmt::format("{}", element_at<std::uint32_t>(bytes, i));
    case core::Dtype::i64: return fmt::format("{}", element_at<std::int64_t>(bytes, i));
    case core::Dtype::f32: return real(static_cast<double>(element_at<float>(bytes, i)));
    case core::Dtype::f64: return real(element_at<double>(bytes, i));
    case core::Dtype::c64: {
      const double re = static_cast<double>(element_at<float>(bytes, 2 * i));
      const double im = static_cast<double>(element_at<float>(bytes, 2 * i + 1));
      return json ? "[" + real(re) + "," + real(im) + "]" : real(re) + "," + real(im);
    }
  }
  return "null";
}

bool array_matches(const core::ArrayShape& shape, std::span<const std::byte> bytes) {
  return (shape.rank == 1 || shape.rank == 2) && shape.bytes() != 0 && shape.bytes() == bytes.size();
}

std::uint64_t row_length(const core::ArrayShape& shape) { return shape.rank == 2 ? shape.dims[1] : shape.dims[0]; }

template <class T>
bool put_integer(std::string_view word, std::vector<std::byte>& out) {
  std::optional<std::int64_t> v;
  if constexpr (std::is_unsigned_v<T>) {
    const auto u = parse_u64(word);
    if (!u || *u > std::numeric_limits<T>::max()) return false;
    v = static_cast<std::int64_t>(*u);
  } else {
    v = parse_i64(word);
    if (!v || *v < std::numeric_limits<T>::min() || *v > std::numeric_limits<T>::max()) return false;
  }
  const auto t = static_cast<T>(*v);
  const auto* p = reinterpret_cast<const std::byte*>(&t);
  out.insert(out.end(), p, p + sizeof(T));
  return true;
}

template <class T>
bool put_real(std::string_view word, std::vector<std::byte>& out) {
  const auto v = parse_f64(word);
  if (!v) return false;
  const auto t = static_cast<T>(*v);
  const auto* p = reinterpret_cast<const std::byte*>(&t);
  out.insert(out.end(), p, p + sizeof(T));
  return true;
}

bool put_element(core::Dtype elem, std::string_view word, std::vector<std::byte>& out) {
  switch (elem) {
    case core::Dtype::i8: return put_integer<std::int8_t>(word, out);
    case core::Dtype::u8: return put_integer<std::uint8_t>(word, out);
    case core::Dtype::i16: return put_integer<std::int16_t>(word, out);
    case core::Dtype::u16: return put_integer<std::uint16_t>(word, out);
    case core::Dtype::i32: return put_integer<std::int32_t>(word, out);
    case core::Dtype::u32: return put_integer<std::uint32_t>(word, out);
    case core::Dtype::i64: return put_integer<std::int64_t>(word, out);
    case core::Dtype::f32:
    case core::Dtype::c64: return put_real<float>(word, out);  // c64: re and im are two words
    case core::Dtype::f64: return put_real<double>(word, out);
  }
  return false;
}

}  // namespace

std::string array_shape_text(const core::ArrayShape& shape) {
  if (shape.rank == 2) return fmt::format("{}[{}x{}]", core::dtype_name(shape.elem), shape.dims[0], shape.dims[1]);
  return fmt::format("{}[{}]", core::dtype_name(shape.elem), shape.dims[0]);
}

std::string array_to_text(const core::ArrayShape& shape, std::span<const std::byte> bytes) {
  if (!array_matches(shape, bytes)) return encode_hex(bytes);
  const std::uint64_t row = row_length(shape);
  std::string out;
  for (std::uint64_t i = 0; i < shape.elements(); ++i) {
    if (i != 0) out += i % row == 0 ? '\n' : ' ';
    out += element_text(shape.elem, bytes, i, false);
  }
  return out;
}

std::string array_to_json(const core::ArrayShape& shape, std::span<const std::byte> bytes) {
  if (!array_matches(shape, bytes)) return json_quote(encode_hex(bytes));
  const std::uint64_t row = row_length(shape);
  std::string out = shape.rank == 2 ? "[[" : "[";
  for (std::uint64_t i = 0; i < shape.elements(); ++i) {
    if (i != 0) out += i % row == 0 ? "],[" : ",";
    out += element_text(shape.elem, bytes, i, true);
  }
  out += shape.rank == 2 ? "]]" : "]";
  return out;
}

core::Result<EncodedArray> encode_array(std::string_view text, core::Dtype elem, std::string_view shape_text) {
  EncodedArray out;
  out.shape.elem = elem;
  const std::uint32_t words_per_element = elem == core::Dtype::c64 ? 2 : 1;
  std::uint64_t words = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    if (is_space(text[i]) || text[i] == ',') {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && !is_space(text[end]) && text[end] != ',') ++end;
    const std::string_view word = text.substr(i, end - i);
    if (!put_element(elem, word, out.bytes))
      return core::fail(core::Errc::invalid_argument,
                        fmt::format("{} (number {}) is not a {} value", json_quote(word), words + 1,
                                    core::dtype_name(elem)));
    ++words;
    i = end;
  }
  if (words % words_per_element != 0)
    return core::fail(core::Errc::invalid_argument, "c64 elements take two numbers each, re and im");
  const std::uint64_t count = words / words_per_element;
  if (shape_text.empty()) {
    out.shape.rank = 1;
    out.shape.dims = {static_cast<std::uint32_t>(std::min<std::uint64_t>(count, std::numeric_limits<std::uint32_t>::max())), 0};
  } else {
    const std::size_t sep = shape_text.find_first_of("x,");
    const auto d0 = parse_whole<std::uint32_t>(shape_text.substr(0, sep), kDecimalBase);
    const auto d1 = sep == std::string_view::npos ? std::optional<std::uint32_t>{0}
                                                  : parse_whole<std::uint32_t>(shape_text.substr(sep + 1), kDecimalBase);
    if (!d0 || !d1 || *d0 == 0 || (sep != std::string_view::npos && *d1 == 0))
      return core::fail(core::Errc::invalid_argument,
                        fmt::format("shape {} is not N or RxC with positive sizes", json_quote(shape_text)));
    out.shape.rank = sep == std::string_view::npos ? 1 : 2;
    out.shape.dims = {*d0, *d1};
  }
  if (count == 0) return core::fail(core::Errc::invalid_argument, "an array needs at least one number");
  if (out.shape.elements() != count)
    return core::fail(core::Errc::invalid_argument,
                      fmt::format("{} elements given for shape {}", count, array_shape_text(out.shape)));
  return out;
}

std::string integer_to_text(ValueType type, std::uint64_t bits) {
  if (type == ValueType::u64) return fmt::format("{}", bits);
  return fmt::format("{}", static_cast<std::int64_t>(bits));
}

namespace {

template <class T>
T load_stored(const std::byte* p) noexcept {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace

bool value_as_f64(core::ValueType type, const std::byte* v, double& out) noexcept {
  switch (type) {
    case core::ValueType::f64: out = load_stored<double>(v); return true;
    case core::ValueType::i64: out = static_cast<double>(load_stored<std::int64_t>(v)); return true;
    case core::ValueType::u64: out = static_cast<double>(load_stored<std::uint64_t>(v)); return true;
    case core::ValueType::none:
    case core::ValueType::bytes:
    case core::ValueType::text:
    case core::ValueType::vector:
    case core::ValueType::array: return false;
  }
  return false;
}

bool value_as_i64(core::ValueType type, const std::byte* v, std::int64_t& out) noexcept {
  switch (type) {
    case core::ValueType::i64: out = load_stored<std::int64_t>(v); return true;
    case core::ValueType::u64:
      out = static_cast<std::int64_t>(std::min<std::uint64_t>(load_stored<std::uint64_t>(v), INT64_MAX));
      return true;
    case core::ValueType::f64: {
      const double d = load_stored<double>(v);
      if (!std::isfinite(d)) return false;
      out = std::llround(std::clamp(d, -9.2e18, 9.2e18));
      return true;
    }
    case core::ValueType::none:
    case core::ValueType::bytes:
    case core::ValueType::text:
    case core::ValueType::vector:
    case core::ValueType::array: return false;
  }
  return false;
}

bool value_as_text(core::ValueType type, const std::byte* v, std::uint32_t length, std::span<char> scratch,
                   std::string_view& out) noexcept {
  if (type == core::ValueType::text || type == core::ValueType::bytes) {
    out = std::string_view(reinterpret_cast<const char*>(v), length);
    return true;
  }
  std::to_chars_result r{};
  char* const first = scratch.data();
  char* const last = scratch.data() + scratch.size();
  switch (type) {
    case core::ValueType::f64: r = std::to_chars(first, last, load_stored<double>(v)); break;
    case core::ValueType::i64: r = std::to_chars(first, last, load_stored<std::int64_t>(v)); break;
    case core::ValueType::u64: r = std::to_chars(first, last, load_stored<std::uint64_t>(v)); break;
    case core::ValueType::none:
    case core::ValueType::bytes:
    case core::ValueType::text:
    case core::ValueType::vector:
    case core::ValueType::array: return false;
  }
  if (r.ec != std::errc{}) return false;
  out = std::string_view(first, static_cast<std::size_t>(r.ptr - first));
  return true;
}

double sample_as_f64(const std::byte* data, core::Dtype dtype, std::size_t i) noexcept {
  switch (dtype) {
    case core::Dtype::i8: return load_stored<std::int8_t>(data + i);
    case core::Dtype::u8: return load_stored<std::uint8_t>(data + i);
    case core::Dtype::i16: return load_stored<std::int16_t>(data + 2 * i);
    case core::Dtype::u16: return load_stored<std::uint16_t>(data + 2 * i);
    case core::Dtype::i32: return load_stored<std::int32_t>(data + 4 * i);
    case core::Dtype::u32: return load_stored<std::uint32_t>(data + 4 * i);
    case core::Dtype::i64: return static_cast<double>(load_stored<std::int64_t>(data + 8 * i));
    case core::Dtype::f32: return load_stored<float>(data + 4 * i);
    case core::Dtype::f64: return load_stored<double>(data + 8 * i);
    case core::Dtype::c64: return load_stored<float>(data + 8 * i);
  }
  return 0;
}

}  // namespace weir::tools

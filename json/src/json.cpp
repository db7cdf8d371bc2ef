#include "weir/json/json.hpp"

#include <array>
#include <cmath>
#include <cstddef>

#include <fmt/format.h>

namespace weir::json {
namespace {

constexpr unsigned char kFirstPrintable = 0x20;           // JSON requires escaping everything below
constexpr std::string_view kReplacement = "\xEF\xBF\xBD"; // U+FFFD in UTF-8

// UTF-8 lead bytes and the code point range each sequence length may encode (no overlongs).
constexpr unsigned char kAsciiEnd = 0x80;
constexpr unsigned char kContinuationMask = 0xC0;
constexpr unsigned char kContinuationBits = 0x80;
constexpr unsigned char kPayloadBits = 0x3F;
constexpr unsigned kPayloadShift = 6;
struct Utf8Lead {
  unsigned char mask;
  unsigned char bits;
  int length;
  char32_t min_code_point;
};
constexpr std::array<Utf8Lead, 3> kUtf8Leads = {{
    {0xE0, 0xC0, 2, 0x80},
    {0xF0, 0xE0, 3, 0x800},
    {0xF8, 0xF0, 4, 0x10000},
}};
constexpr char32_t kMaxCodePoint = 0x10FFFF;
constexpr char32_t kSurrogateFirst = 0xD800;
constexpr char32_t kSurrogateLast = 0xDFFF;

// Length of the valid UTF-8 sequence starting at text[i], or 0 when it is not valid.
int utf8_sequence_length(std::string_view text, std::size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  for (const Utf8Lead& form : kUtf8Leads) {
    if ((lead & form.mask) != form.bits) continue;
    const auto length = static_cast<std::size_t>(form.length);
    if (i + length > text.size()) return 0;
    char32_t code_point = lead & static_cast<unsigned char>(~form.mask);
    for (std::size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & kContinuationMask) != kContinuationBits) return 0;
      code_point = (code_point << kPayloadShift) | (next & kPayloadBits);
    }
    const bool surrogate = code_point >= kSurrogateFirst && code_point <= kSurrogateLast;
    if (code_point < form.min_code_point || code_point > kMaxCodePoint || surrogate) return 0;
    return form.length;
  }
  return 0;
}

}  // namespace

std::string json_quote(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);  // the text and its two quotes
  out += '"';
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= kAsciiEnd) {
      const int length = utf8_sequence_length(text, i);
      if (length == 0) {
        out += kReplacement;  // keeps the document valid; the raw bytes are available via --raw
        ++i;
      } else {
        out.append(text.substr(i, static_cast<std::size_t>(length)));
        i += static_cast<std::size_t>(length);
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (byte < kFirstPrintable) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(byte));
        } else {
          out += c;
        }
    }
    ++i;
  }
  out += '"';
  return out;
}

void JsonObject::add_key(std::string_view key) {
  if (!body_.empty()) body_ += ',';
  body_ += json_quote(key);
  body_ += ':';
}

JsonObject& JsonObject::text(std::string_view key, std::string_view value) { return raw(key, json_quote(value)); }

JsonObject& JsonObject::boolean(std::string_view key, bool value) { return raw(key, value ? "true" : "false"); }

JsonObject& JsonObject::real(std::string_view key, double value) {
  return raw(key, std::isfinite(value) ? format_real(value) : "null");
}

JsonObject& JsonObject::raw(std::string_view key, std::string_view json) {
  add_key(key);
  body_ += json;
  return *this;
}

void JsonArray::add_separator() {
  if (!body_.empty()) body_ += ',';
}

JsonArray& JsonArray::text(std::string_view value) { return raw(json_quote(value)); }

JsonArray& JsonArray::real(double value) { return raw(std::isfinite(value) ? format_real(value) : "null"); }

JsonArray& JsonArray::raw(std::string_view json) {
  add_separator();
  body_ += json;
  return *this;
}

std::string format_real(double value) { return fmt::format("{}", value); }

}  // namespace weir::json

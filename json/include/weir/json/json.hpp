#pragma once
// JSON text for the weir commands and the benchmark: a quoted string, and objects and arrays built
// field by field. No parsing (recorders/ledger reads JSON with nlohmann-json).
#include <concepts>
#include <string>
#include <string_view>

#include <fmt/core.h>

namespace weir::json {

/// Returns `text` as a quoted JSON string. Control characters become \uXXXX escapes and bytes that
/// are not valid UTF-8 become U+FFFD, so the result is always valid JSON whatever the input bytes.
/// Thread: any.
[[nodiscard]] std::string json_quote(std::string_view text);

/// Builds one JSON object field by field, in insertion order. Keys are quoted by the builder.
/// Thread: one owner.
class JsonObject {
 public:
  JsonObject& text(std::string_view key, std::string_view value);
  JsonObject& boolean(std::string_view key, bool value);
  /// Non-finite values are written as null: JSON has no NaN or infinity.
  JsonObject& real(std::string_view key, double value);
  /// Any integer type except bool (which goes through boolean()).
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  JsonObject& number(std::string_view key, T value) {
    return raw(key, fmt::format("{}", value));
  }
  /// Inserts `json` unchanged. Requires: `json` is one valid JSON value (an object or array built here).
  JsonObject& raw(std::string_view key, std::string_view json);

  [[nodiscard]] std::string str() const { return "{" + body_ + "}"; }

 private:
  void add_key(std::string_view key);
  std::string body_;
};

/// Builds one JSON array element by element. Thread: one owner.
class JsonArray {
 public:
  JsonArray& text(std::string_view value);
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  JsonArray& number(T value) {
    return raw(fmt::format("{}", value));
  }
  JsonArray& real(double value);
  /// Requires: `json` is one valid JSON value.
  JsonArray& raw(std::string_view json);

  [[nodiscard]] std::string str() const { return "[" + body_ + "]"; }

 private:
  void add_separator();
  std::string body_;
};

/// Formats a double as the shortest text that reads back to the same value ("0.1", "1e+300").
[[nodiscard]] std::string format_real(double value);

}  // namespace weir::json

#pragma once
// Printing for the weir CLI: JSON objects for scripts, small formatting helpers for people.
// Every command prints either human text or exactly one JSON object on stdout; errors go to stderr.
#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>

#include <fmt/core.h>

namespace weir::tools {

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

/// Prints one JSON document and a newline to stdout. Thread: any (one writer to stdout at a time).
void print_json(const JsonObject& object);

/// Prints "weir: <message>" and a newline to stderr; a stderr no one reads any more (EPIPE, with
/// SIGPIPE ignored) is not an error. Thread: any.
void print_error(std::string_view message);

/// Whether an exception thrown by a print is a closed pipe (EPIPE): the reader of the output is gone.
[[nodiscard]] bool is_closed_pipe(const std::system_error& error) noexcept;

/// Runs `print` (fmt::print calls); output to a pipe whose reader is gone (EPIPE, with SIGPIPE
/// ignored) is dropped instead of failing the command, which goes on to its clean stop. Thread: any.
template <class Print>
void print_unless_closed(Print&& print) {
  try {
    print();
  } catch (const std::system_error& e) {
    if (!is_closed_pipe(e)) throw;
  }
}

/// Formats nanoseconds since the Unix epoch as ISO 8601 UTC with milliseconds:
/// "2024-05-01T12:34:56.789Z".
[[nodiscard]] std::string iso8601_utc(std::uint64_t epoch_ns);

/// Formats a byte count for people: "512 B", "4.0 KiB", "1.5 GiB".
[[nodiscard]] std::string human_bytes(std::uint64_t bytes);

/// Formats permission bits the way chmod takes them: "0660".
[[nodiscard]] std::string octal_mode(std::uint32_t mode);

}  // namespace weir::tools

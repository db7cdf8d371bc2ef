#pragma once
// Printing for the weir CLI: JSON objects for scripts, small formatting helpers for people.
// Every command prints either human text or exactly one JSON object on stdout; errors go to stderr.
#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>

#include <fmt/core.h>

#include "weir/json/json.hpp"

namespace weir::tools {

// The JSON builders and json_quote live in weir::json (json/), which bench/ uses too.
using json::format_real;
using json::json_quote;
using json::JsonArray;
using json::JsonObject;

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

/// This host's name (a default name for clients that announce themselves), `fallback` when it has none.
[[nodiscard]] std::string host_name_or(std::string_view fallback);

}  // namespace weir::tools

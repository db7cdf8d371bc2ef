#pragma once
// JSON in tests: the CLI's and the benchmarks' --json output, read with a real parser.
#include <string_view>

#include <nlohmann/json.hpp>

namespace weir::test {

/// Parses `text` as exactly one JSON document (white space around it allowed). On any syntax
/// error, trailing text or invalid UTF-8 the result is discarded (`is_discarded()`).
inline nlohmann::json parse_json(std::string_view text) { return nlohmann::json::parse(text, nullptr, false); }

/// Whether `text` is exactly one well-formed JSON object.
inline bool is_one_json_object(std::string_view text) {
  const nlohmann::json j = parse_json(text);
  return !j.is_discarded() && j.is_object();
}

}  // namespace weir::test

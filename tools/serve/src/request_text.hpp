#pragma once
// The text of an HTTP request as `weir serve` reads it: the target's path and query, a cookie, a
// secret compared in constant time. Pure functions.
#include <map>
#include <string>
#include <string_view>

namespace weir::serve {

struct Target {
  std::string path;
  std::map<std::string, std::string> query;
};

/// %XX escapes decoded and '+' as a space; a malformed escape is kept as it is.
[[nodiscard]] std::string url_decode(std::string_view in);
/// "/path?a=1&b=%20" -> path and query, both decoded (the last of a repeated name wins).
[[nodiscard]] Target parse_target(std::string_view target);
/// Equal strings, without an early exit at the first byte that differs.
[[nodiscard]] bool same_secret(std::string_view a, std::string_view b);
/// The value of cookie `name` in a Cookie header; empty when absent.
[[nodiscard]] std::string cookie_value(std::string_view cookies, std::string_view name);

}  // namespace weir::serve

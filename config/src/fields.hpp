#pragma once
// The settings table of one declaration, taken out of Lua, and typed access to it that names the
// declaration, the key and the problem in every error.
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "weir/config/pipeline.hpp"

namespace weir::config::detail {

struct Value {
  enum class Type : std::uint8_t { number, integer, text, boolean, list } type = Type::text;
  double number = 0;
  long long integer = 0;
  std::string text;
  bool boolean = false;
  std::vector<std::string> list;
  [[nodiscard]] std::string as_text() const;  // any scalar, as text (numbers with %.17g)
  [[nodiscard]] const char* type_name() const noexcept;
};

/// One declaration's settings, with what the file said where.
class Fields {
 public:
  Fields(std::string what, Origin origin, std::map<std::string, Value> values)
      : what_(std::move(what)), origin_(std::move(origin)), values_(std::move(values)) {}

  [[nodiscard]] const Origin& origin() const noexcept { return origin_; }
  [[nodiscard]] bool has(const std::string& key) const { return values_.count(key) != 0; }
  [[nodiscard]] core::Result<std::string> text(const std::string& key, std::optional<std::string> fallback = {});
  [[nodiscard]] core::Result<long long> integer(const std::string& key, long long lo, long long hi,
                                                std::optional<long long> fallback = {});
  [[nodiscard]] core::Result<double> number(const std::string& key, std::optional<double> fallback = {});
  [[nodiscard]] core::Result<bool> boolean(const std::string& key, std::optional<bool> fallback = {});
  [[nodiscard]] core::Result<std::vector<std::string>> list(const std::string& key, bool required);
  /// Every key not taken yet, as text: a part's parameters. Refuses keys outside `allowed` (with a
  /// did-you-mean) unless `allowed` is empty.
  [[nodiscard]] core::Result<std::map<std::string, std::string>> rest(std::span<const char* const> allowed);
  /// Refuses any key not taken yet, with a did-you-mean among `known`.
  [[nodiscard]] core::Result<void> no_other_keys(std::span<const char* const> known);

  /// `file:line: <what>: message`.
  [[nodiscard]] core::Error error(const std::string& message) const;

 private:
  std::optional<Value> take(const std::string& key);
  std::string what_;
  Origin origin_;
  std::map<std::string, Value> values_;
};

using config::error_at;
/// " (did you mean 'x'?)" for the closest of `known` within two edits, else "".
[[nodiscard]] std::string did_you_mean(const std::string& word, std::span<const char* const> known);

}  // namespace weir::config::detail

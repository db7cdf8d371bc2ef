#pragma once
// The settings of one declaration as the pipeline file wrote them, and typed access to them that
// names the declaration, the key and the problem in every error (`file:line: what: message`).
// Parts whose settings nest (an instrument's list of queries) read them through Fields too.
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "weir/config/pipeline.hpp"

namespace weir::config {

/// Typed, checked access to one table of settings. Each accessor takes its key out, so that
/// no_other_keys() afterwards refuses whatever the reader did not expect.
class Fields {
 public:
  Fields(std::string what, Origin origin, std::map<std::string, Setting> values)
      : what_(std::move(what)), origin_(std::move(origin)), values_(std::move(values)) {}

  [[nodiscard]] const Origin& origin() const noexcept { return origin_; }
  [[nodiscard]] const std::string& what() const noexcept { return what_; }
  [[nodiscard]] bool has(const std::string& key) const { return values_.count(key) != 0; }
  /// Whether `key` is there as one text (not a list).
  [[nodiscard]] bool is_text(const std::string& key) const {
    const auto it = values_.find(key);
    return it != values_.end() && it->second.type == Setting::Type::text;
  }
  [[nodiscard]] core::Result<std::string> text(const std::string& key, std::optional<std::string> fallback = {});
  [[nodiscard]] core::Result<long long> integer(const std::string& key, long long lo, long long hi,
                                                std::optional<long long> fallback = {});
  [[nodiscard]] core::Result<double> number(const std::string& key, std::optional<double> fallback = {});
  [[nodiscard]] core::Result<bool> boolean(const std::string& key, std::optional<bool> fallback = {});
  /// A list of names (strings or numbers, as text); one name alone is a list of one.
  [[nodiscard]] core::Result<std::vector<std::string>> list(const std::string& key, bool required);
  /// A nested table of named settings, as Fields named "<what>.<key>". Absent and not required: an
  /// empty table.
  [[nodiscard]] core::Result<Fields> table(const std::string& key, bool required);
  /// A list of tables (`queries = { {...}, {...} }`), each as Fields named "<what>.<key>[i]".
  /// Absent and not required: none.
  [[nodiscard]] core::Result<std::vector<Fields>> items(const std::string& key, bool required);
  /// Every key not taken yet, as text: a part's parameters. Refuses keys outside `allowed` (with a
  /// did-you-mean) unless `allowed` is empty, and nested tables that are not lists of names.
  [[nodiscard]] core::Result<std::map<std::string, std::string>> rest(std::span<const char* const> allowed);
  /// Every key not taken yet, as written: a part's settings for the part to read itself.
  [[nodiscard]] std::map<std::string, Setting> take_rest();
  /// Refuses any key not taken yet, with a did-you-mean among `known`.
  [[nodiscard]] core::Result<void> no_other_keys(std::span<const char* const> known);

  /// `file:line: <what>: message`.
  [[nodiscard]] core::Error error(const std::string& message) const;

 private:
  std::optional<Setting> take(const std::string& key);
  std::string what_;
  Origin origin_;
  std::map<std::string, Setting> values_;
};

/// Fields over a driver's settings (DriverDecl::settings), named `driver "NAME"` in errors.
[[nodiscard]] Fields driver_fields(const DriverDecl& driver);

/// " (did you mean 'x'?)" for the closest of `known` within two edits, else "".
[[nodiscard]] std::string did_you_mean(const std::string& word, std::span<const char* const> known);

}  // namespace weir::config

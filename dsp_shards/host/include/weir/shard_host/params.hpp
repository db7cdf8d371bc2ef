#pragma once
// A shard's parameters, resolved on the cold path: what the user gave (key=value) checked against
// the table the shard declares, defaults filled in, every value range-checked before configure.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "weir/core/error.hpp"
#include "weir/shard.h"

namespace weir::shard_host {

/// One --param as given: name and text value.
using ParamArg = std::pair<std::string, std::string>;

/// Splits "name=value" (the value may contain '=' and may be empty). Fails for text without '=' or
/// with an empty name. Thread: any.
[[nodiscard]] core::Result<ParamArg> parse_param_arg(std::string_view text);

/// Every declared parameter with its value, in the shard's declared order, ready for
/// weir_shard_config. Thread: one owner; the pointer arrays stay valid while it lives unmoved.
class ResolvedParams {
 public:
  ResolvedParams() = default;
  ResolvedParams(std::vector<std::string> names, std::vector<std::string> values);
  ResolvedParams(const ResolvedParams&) = delete;  // the pointer arrays point into this object
  ResolvedParams& operator=(const ResolvedParams&) = delete;

  [[nodiscard]] const std::vector<std::string>& names() const noexcept { return names_; }
  [[nodiscard]] const std::vector<std::string>& values() const noexcept { return values_; }
  /// The value of a declared parameter, or nullptr.
  [[nodiscard]] const std::string* find(std::string_view name) const noexcept;
  [[nodiscard]] const char* const* name_array() const noexcept { return name_ptrs_.data(); }
  [[nodiscard]] const char* const* value_array() const noexcept { return value_ptrs_.data(); }
  [[nodiscard]] std::uint32_t size() const noexcept { return static_cast<std::uint32_t>(names_.size()); }

 private:
  std::vector<std::string> names_, values_;
  std::vector<const char*> name_ptrs_, value_ptrs_;  // into names_ and values_, which never change
};

/// Resolves `given` against api's declared parameters. Refuses, naming the shard (`what`), the
/// parameter and the problem: an unknown name (with a did-you-mean from the declared names), a name
/// given twice, a value that does not parse as its type (INT: a whole number; REAL: a finite number;
/// BOOL: true/false/yes/no/on/off/1/0), a number outside [min, max] (no range when both are 0; an
/// infinite bound is open), a text not among `choices`, a required parameter (NULL default) left
/// out, and a declared default that fails its own check. BOOL values are handed on as "true" or
/// "false"; the others as given. Requires: check_api(api) succeeded. Thread: any.
[[nodiscard]] core::Result<std::unique_ptr<ResolvedParams>> resolve_params(const weir_shard_api& api,
                                                                           const std::string& what,
                                                                           const std::vector<ParamArg>& given);

/// The declared name closest to `name` by edit distance, or "" when none is close. Thread: any.
[[nodiscard]] std::string closest_name(std::string_view name, const std::vector<std::string_view>& candidates);

/// "int", "real", "text", "bool" for a weir_param_type. Thread: any.
[[nodiscard]] const char* param_type_name(std::uint32_t type) noexcept;

}  // namespace weir::shard_host

// Parameter resolution: every value is parsed and range-checked here, on the cold path, so a shard's
// configure() only ever sees text that is valid for its declared type.
#include "weir/shard_host/params.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "weir/dsp/param_text.hpp"
#include "weir/shard_host/host_limits.hpp"

namespace weir::shard_host {

namespace {

using core::Errc;
using core::fail;
using dsp::among_choices;
using dsp::parse_bool;
using dsp::parse_int;
using dsp::parse_real;

std::string show(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", v);
  // Shortest text that reads back the same: try fewer digits first.
  for (int digits = 1; digits <= 17; ++digits) {
    char shorter[32];
    std::snprintf(shorter, sizeof shorter, "%.*g", digits, v);
    if (std::strtod(shorter, nullptr) == v) return shorter;
  }
  return text;
}

// Checks one value against its declaration; returns the text handed to the shard or why not.
core::Result<std::string> check_value(const weir_shard_param& p, const std::string& value, const std::string& where) {
  const std::string name = std::string("parameter '") + p.name + "'";
  const auto refuse = [&](const std::string& why) { return fail(Errc::invalid_argument, where + name + ": " + why); };
  const bool ranged = !(p.min == 0 && p.max == 0);
  const auto in_range = [&](double v) { return !ranged || (!(v < p.min) && !(v > p.max)); };
  const auto range_text = [&] { return "[" + show(p.min) + ", " + show(p.max) + "]"; };
  switch (static_cast<weir_param_type>(p.type)) {
    case WEIR_PARAM_INT: {
      const auto v = parse_int(value);
      if (!v) return refuse("'" + value + "' is not a whole number");
      if (!in_range(static_cast<double>(*v))) return refuse(value + " is out of range " + range_text());
      return value;
    }
    case WEIR_PARAM_REAL: {
      const auto v = parse_real(value);
      if (!v) return refuse("'" + value + "' is not a finite number");
      if (!in_range(*v)) return refuse(value + " is out of range " + range_text());
      return value;
    }
    case WEIR_PARAM_TEXT:
      if (p.choices != nullptr && !among_choices(value, p.choices))
        return refuse("'" + value + "' is not one of " + p.choices);
      return value;
    case WEIR_PARAM_BOOL: {
      const auto v = parse_bool(value);
      if (!v) return refuse("'" + value + "' is not a boolean (true/false, yes/no, on/off, 1/0)");
      return std::string(*v ? "true" : "false");
    }
  }
  return refuse("unknown type " + std::to_string(p.type));
}

}  // namespace

core::Result<ParamArg> parse_param_arg(std::string_view text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0)
    return fail(Errc::invalid_argument, "--param '" + std::string(text) + "': expected name=value");
  return ParamArg{std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
}

ResolvedParams::ResolvedParams(std::vector<std::string> names, std::vector<std::string> values)
    : names_(std::move(names)), values_(std::move(values)) {
  for (const std::string& n : names_) name_ptrs_.push_back(n.c_str());
  for (const std::string& v : values_) value_ptrs_.push_back(v.c_str());
}

const std::string* ResolvedParams::find(std::string_view name) const noexcept {
  for (std::size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name) return &values_[i];
  return nullptr;
}

std::string closest_name(std::string_view name, const std::vector<std::string_view>& candidates) {
  return dsp::closest_name(name, candidates, kSuggestMaxDistance);
}

const char* param_type_name(std::uint32_t type) noexcept {
  switch (type) {
    case WEIR_PARAM_INT: return "int";
    case WEIR_PARAM_REAL: return "real";
    case WEIR_PARAM_TEXT: return "text";
    case WEIR_PARAM_BOOL: return "bool";
    default: return "unknown";
  }
}

core::Result<std::unique_ptr<ResolvedParams>> resolve_params(const weir_shard_api& api, const std::string& what,
                                                             const std::vector<ParamArg>& given) {
  const std::string where = what + ": ";
  std::vector<std::string_view> declared;
  for (std::uint32_t i = 0; i < api.param_count; ++i) declared.emplace_back(api.params[i].name);
  for (std::size_t i = 0; i < given.size(); ++i) {
    const std::string& name = given[i].first;
    if (std::find(declared.begin(), declared.end(), name) == declared.end()) {
      std::string list;
      for (std::string_view d : declared) list += (list.empty() ? "" : ", ") + std::string(d);
      const std::string near = closest_name(name, declared);
      return fail(Errc::invalid_argument,
                  where + "unknown parameter '" + name + "'" + (near.empty() ? "" : ": did you mean '" + near + "'?") +
                      (declared.empty() ? " (it takes no parameters)" : " (its parameters: " + list + ")"));
    }
    for (std::size_t j = 0; j < i; ++j)
      if (given[j].first == name) return fail(Errc::invalid_argument, where + "parameter '" + name + "' given twice");
  }
  std::vector<std::string> names, values;
  for (std::uint32_t i = 0; i < api.param_count; ++i) {
    const weir_shard_param& p = api.params[i];
    const auto it = std::find_if(given.begin(), given.end(), [&](const ParamArg& g) { return g.first == p.name; });
    std::string value;
    if (it != given.end()) {
      value = it->second;
    } else if (p.default_value != nullptr) {
      value = p.default_value;
      // A default is the shard's own promise: one that fails its check is the shard's bug.
      if (auto ok = check_value(p, value, where + "declared default of "); !ok)
        return tl::make_unexpected(ok.error());
    } else {
      return fail(Errc::invalid_argument, where + "parameter '" + std::string(p.name) + "' (" +
                                              param_type_name(p.type) + ") is required" +
                                              (p.help != nullptr ? std::string(": ") + p.help : std::string{}));
    }
    auto checked = check_value(p, value, where);
    if (!checked) return tl::make_unexpected(checked.error());
    names.emplace_back(p.name);
    values.push_back(std::move(*checked));
  }
  return std::make_unique<ResolvedParams>(std::move(names), std::move(values));
}

}  // namespace weir::shard_host

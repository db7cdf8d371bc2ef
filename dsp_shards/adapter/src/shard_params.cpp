// Parameters arrive as text; the host has range-checked them already, but configure is also called
// directly, so every value is parsed and checked again here, the same way the host does it.
#include "weir/dsp/shard_params.hpp"

#include <cstring>
#include <optional>

#include "weir/dsp/param_text.hpp"

namespace weir::dsp {

const weir_shard_param* ParamReader::declared(std::string_view name) const noexcept {
  for (const weir_shard_param& p : table_)
    if (p.name != nullptr && name == p.name) return &p;
  return nullptr;
}

const char* ParamReader::value_of(const weir_shard_param& param) const noexcept {
  if (cfg_.param_names != nullptr && cfg_.param_values != nullptr)
    for (std::uint32_t i = 0; i < cfg_.param_count; ++i)
      if (cfg_.param_names[i] != nullptr && std::strcmp(cfg_.param_names[i], param.name) == 0)
        return cfg_.param_values[i] != nullptr ? cfg_.param_values[i] : "";
  return param.default_value;
}

tl::unexpected<core::Error> ParamReader::refuse(ParamProblem::Kind kind, std::string_view name,
                                                std::string_view value) const {
  return core::fail(core::Errc::invalid_argument, wording_(ParamProblem{kind, name, value, declared(name)}));
}

core::Result<void> ParamReader::check_names() const {
  if (cfg_.param_count > 0 && (cfg_.param_names == nullptr || cfg_.param_values == nullptr))
    return core::fail(core::Errc::invalid_argument,
                      std::to_string(cfg_.param_count) + " parameters given without names or values");
  for (std::uint32_t i = 0; i < cfg_.param_count; ++i) {
    const char* name = cfg_.param_names[i];
    if (name != nullptr && declared(name) != nullptr) continue;
    std::string known;
    for (const weir_shard_param& p : table_) known += (known.empty() ? "" : ", ") + std::string(p.name);
    return core::fail(core::Errc::invalid_argument, "unknown parameter '" + std::string(name != nullptr ? name : "") +
                                                        "': known are " + known);
  }
  return {};
}

core::Result<std::string_view> ParamReader::raw(std::string_view name) const {
  const weir_shard_param* param = declared(name);
  const char* value = param != nullptr ? value_of(*param) : nullptr;
  if (value == nullptr) return refuse(ParamProblem::Kind::required, name, {});
  return std::string_view(value);
}

template <class T, class Parse>
core::Result<T> ParamReader::number(std::string_view name, Parse parse, ParamProblem::Kind unparsable) const {
  auto value = raw(name);
  if (!value) return tl::make_unexpected(value.error());
  const std::optional<T> parsed = parse(*value);
  if (!parsed) return refuse(unparsable, name, *value);
  const weir_shard_param& p = *declared(name);
  const auto as_double = static_cast<double>(*parsed);
  if (!(as_double >= p.min && as_double <= p.max)) return refuse(ParamProblem::Kind::out_of_range, name, *value);
  return *parsed;
}

core::Result<std::int64_t> ParamReader::integer(std::string_view name) const {
  return number<std::int64_t>(name, parse_int, ParamProblem::Kind::not_integer);
}

core::Result<double> ParamReader::real(std::string_view name) const {
  return number<double>(name, parse_real, ParamProblem::Kind::not_number);
}

core::Result<bool> ParamReader::boolean(std::string_view name) const {
  auto value = raw(name);
  if (!value) return tl::make_unexpected(value.error());
  const auto flag = parse_bool(*value);
  if (!flag) return refuse(ParamProblem::Kind::not_boolean, name, *value);
  return *flag;
}

core::Result<std::string_view> ParamReader::text(std::string_view name) const {
  auto value = raw(name);
  if (!value) return value;
  const weir_shard_param& p = *declared(name);
  if (p.choices != nullptr && !among_choices(*value, p.choices))
    return refuse(ParamProblem::Kind::not_choice, name, *value);
  return value;
}

}  // namespace weir::dsp

// Parameters arrive as text; the host has range-checked them already, but configure is also called
// directly (tests, embedding programs), so every value is parsed and checked again here.
#include "shard_params.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

#include "text.hpp"
#include "weir/core/arena_layout.hpp"
#include "weir/core/channel.hpp"
#include "weir/dsp/sample_convert.hpp"

namespace weir::dsp::detail {

const weir_shard_param* ShardParams::declared(std::string_view name) const noexcept {
  for (const weir_shard_param& p : declared_)
    if (name == p.name) return &p;
  return nullptr;
}

core::Error ShardParams::bad(std::string_view name, std::string_view value, const std::string& why) const {
  return core::Error{core::Errc::invalid_argument, std::string(kind_) + ": parameter " + std::string(name) + " = '" +
                                                       std::string(value) + "': " + why};
}

core::Result<std::string_view> ShardParams::raw(std::string_view name) const {
  for (std::uint32_t i = 0; i < cfg_.param_count; ++i)
    if (cfg_.param_names != nullptr && cfg_.param_names[i] != nullptr && name == cfg_.param_names[i])
      return std::string_view(cfg_.param_values[i] != nullptr ? cfg_.param_values[i] : "");
  const weir_shard_param* p = declared(name);
  if (p == nullptr || p->default_value == nullptr)
    return core::fail(core::Errc::invalid_argument,
                      std::string(kind_) + ": parameter " + std::string(name) + " is required and was not given");
  return std::string_view(p->default_value);
}

core::Result<double> ShardParams::in_range(std::string_view name, std::string_view value, double number) const {
  const weir_shard_param* p = declared(name);
  if (p != nullptr && !(number >= p->min && number <= p->max))
    return tl::make_unexpected(bad(name, value, "out of range; allowed " + num(p->min) + " .. " + num(p->max)));
  return number;
}

core::Result<std::string_view> ShardParams::text(std::string_view name) const {
  auto value = raw(name);
  if (!value) return value;
  const weir_shard_param* p = declared(name);
  if (p == nullptr || p->choices == nullptr) return value;
  std::string_view rest = p->choices;
  while (!rest.empty()) {
    const std::size_t bar = rest.find('|');
    if (rest.substr(0, bar) == *value) return value;
    rest = bar == std::string_view::npos ? std::string_view{} : rest.substr(bar + 1);
  }
  return tl::make_unexpected(bad(name, *value, "not one of " + std::string(p->choices)));
}

core::Result<double> ShardParams::real(std::string_view name) const {
  auto value = raw(name);
  if (!value) return tl::make_unexpected(value.error());
  double number = 0;
  const char* end = value->data() + value->size();
  const auto [ptr, ec] = std::from_chars(value->data(), end, number);
  if (ec != std::errc{} || ptr != end || !std::isfinite(number))
    return tl::make_unexpected(bad(name, *value, "not a finite number"));
  return in_range(name, *value, number);
}

core::Result<std::int64_t> ShardParams::integer(std::string_view name) const {
  auto value = raw(name);
  if (!value) return tl::make_unexpected(value.error());
  std::int64_t number = 0;
  const char* end = value->data() + value->size();
  const auto [ptr, ec] = std::from_chars(value->data(), end, number);
  if (ec != std::errc{} || ptr != end) return tl::make_unexpected(bad(name, *value, "not an integer"));
  auto checked = in_range(name, *value, static_cast<double>(number));
  if (!checked) return tl::make_unexpected(checked.error());
  return number;
}

core::Result<bool> ShardParams::boolean(std::string_view name) const {
  auto value = raw(name);
  if (!value) return tl::make_unexpected(value.error());
  for (const char* yes : {"true", "1", "yes", "on"})
    if (*value == yes) return true;
  for (const char* no : {"false", "0", "no", "off"})
    if (*value == no) return false;
  return tl::make_unexpected(bad(name, *value, "not a boolean; use true or false"));
}

core::Result<void> check_input(const char* kind, const weir_shard_config& cfg) {
  const std::string k(kind);
  if (cfg.abi_version != WEIR_SHARD_ABI_VERSION || cfg.struct_size != sizeof(weir_shard_config))
    return core::fail(core::Errc::invalid_argument,
                      k + ": host ABI " + std::to_string(cfg.abi_version) + " with config size " +
                          std::to_string(cfg.struct_size) + "; this shard needs ABI " +
                          std::to_string(WEIR_SHARD_ABI_VERSION) + " and size " +
                          std::to_string(sizeof(weir_shard_config)));
  const std::string channel = cfg.input_channel != nullptr ? cfg.input_channel : "";
  const auto dtype = static_cast<core::Dtype>(cfg.input_dtype);
  if (!is_real_dtype(dtype))
    return core::fail(core::Errc::invalid_argument,
                      k + ": input channel '" + channel + "' has dtype " + core::dtype_name(dtype) +
                          "; accepted: i8, u8, i16, u16, i32, u32, i64, f32, f64");
  if (!std::isfinite(cfg.input_rate_hz) || cfg.input_rate_hz <= 0)
    return core::fail(core::Errc::invalid_argument,
                      k + ": input channel '" + channel + "' has sample rate " + num(cfg.input_rate_hz) +
                          " Hz; a positive rate is needed");
  if (cfg.input_samples_per_block == 0)
    return core::fail(core::Errc::invalid_argument, k + ": input channel '" + channel + "' has empty blocks");
  return {};
}

std::string output_name(const weir_shard_config& cfg, const char* suffix) {
  const std::string input = cfg.input_channel != nullptr ? cfg.input_channel : "";
  const std::string base = cfg.output_base != nullptr ? cfg.output_base : "";
  if (!base.empty() && base != input) return base;
  return input + "." + suffix;
}

core::Result<void> declare_channel(const char* kind, weir_shard_config& cfg, const std::string& name, double rate_hz,
                                   std::uint32_t samples_per_block, const std::string& units) {
  weir_shard_output out{};
  if (name.empty() || name.size() >= sizeof(out.name))
    return core::fail(core::Errc::invalid_argument, std::string(kind) + ": output name '" + name + "' must be 1 .. " +
                                                        std::to_string(sizeof(out.name) - 1) + " bytes");
  if (units.size() >= sizeof(out.units))
    return core::fail(core::Errc::invalid_argument, std::string(kind) + ": output units '" + units +
                                                        "' are longer than " + std::to_string(sizeof(out.units) - 1) +
                                                        " bytes");
  std::memcpy(out.name, name.c_str(), name.size() + 1);
  std::memcpy(out.units, units.c_str(), units.size() + 1);
  out.kind = WEIR_OUTPUT_CHANNEL;
  out.dtype = WEIR_DTYPE_F32;
  out.rate_hz = rate_hz;
  out.samples_per_block = samples_per_block;
  cfg.outputs[0] = out;
  cfg.output_count = 1;
  return {};
}

void write_error(char* error, std::size_t error_bytes, std::string_view message) noexcept {
  if (error == nullptr || error_bytes == 0) return;
  const std::size_t n = std::min(message.size(), error_bytes - 1);
  std::memcpy(error, message.data(), n);
  error[n] = '\0';
}

}  // namespace weir::dsp::detail

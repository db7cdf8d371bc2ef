#include "shard_params.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "format.hpp"

namespace weir::dsp::detail {

namespace {

tl::unexpected<core::Error> refuse(std::string why) {
  return core::fail(core::Errc::invalid_argument, std::move(why));
}

std::string quoted(const char* text) { return "'" + std::string(text != nullptr ? text : "") + "'"; }

template <class T>
void convert(const void* samples, std::size_t first, std::size_t count, double* out) noexcept {
  const auto* bytes = static_cast<const unsigned char*>(samples) + first * sizeof(T);
  for (std::size_t i = 0; i < count; ++i) {
    T value;
    std::memcpy(&value, bytes + i * sizeof(T), sizeof(T));  // arena slots promise no alignment to a type
    out[i] = static_cast<double>(value);
  }
}

}  // namespace

std::string out_of_range(const char* name, const std::string& value, const std::string& allowed) {
  return "parameter '" + std::string(name) + "' = " + value + ": " + allowed;
}

const weir_shard_param* ParamReader::declared(const char* name) const noexcept {
  for (const auto& p : table_)
    if (std::strcmp(p.name, name) == 0) return &p;
  return nullptr;
}

const char* ParamReader::value_of(const weir_shard_param& param) const noexcept {
  for (std::uint32_t i = 0; i < cfg_.param_count; ++i)
    if (cfg_.param_names[i] != nullptr && std::strcmp(cfg_.param_names[i], param.name) == 0)
      return cfg_.param_values[i] != nullptr ? cfg_.param_values[i] : "";
  return param.default_value;
}

core::Result<void> ParamReader::check_names() const {
  if (cfg_.param_count > 0 && (cfg_.param_names == nullptr || cfg_.param_values == nullptr))
    return refuse(std::to_string(cfg_.param_count) + " parameters given without names or values");
  for (std::uint32_t i = 0; i < cfg_.param_count; ++i) {
    if (cfg_.param_names[i] == nullptr || declared(cfg_.param_names[i]) == nullptr) {
      std::string known;
      for (const auto& p : table_) known += (known.empty() ? "" : ", ") + std::string(p.name);
      return refuse("unknown parameter " + quoted(cfg_.param_names[i]) + ": known are " + known);
    }
  }
  return {};
}

core::Result<double> ParamReader::in_range(const weir_shard_param& param, const char* value, double number) const {
  if (!(number >= param.min && number <= param.max))
    return refuse(out_of_range(param.name, value, "allowed " + num(param.min) + " to " + num(param.max)));
  return number;
}

core::Result<double> ParamReader::real(const char* name) const {
  const weir_shard_param* param = declared(name);
  const char* value = param != nullptr ? value_of(*param) : nullptr;
  if (value == nullptr) return refuse("parameter '" + std::string(name) + "' is required");
  char* end = nullptr;
  errno = 0;
  const double number = std::strtod(value, &end);
  if (end == value || *end != '\0' || errno == ERANGE || !std::isfinite(number))
    return refuse(out_of_range(name, quoted(value), "not a finite number"));
  return in_range(*param, value, number);
}

core::Result<std::int64_t> ParamReader::integer(const char* name) const {
  const weir_shard_param* param = declared(name);
  const char* value = param != nullptr ? value_of(*param) : nullptr;
  if (value == nullptr) return refuse("parameter '" + std::string(name) + "' is required");
  char* end = nullptr;
  errno = 0;
  const long long number = std::strtoll(value, &end, 10);
  if (end == value || *end != '\0' || errno == ERANGE)
    return refuse(out_of_range(name, quoted(value), "not an integer"));
  auto checked = in_range(*param, value, static_cast<double>(number));
  if (!checked) return tl::make_unexpected(checked.error());
  return std::int64_t{number};
}

core::Result<bool> ParamReader::boolean(const char* name) const {
  const weir_shard_param* param = declared(name);
  const char* value = param != nullptr ? value_of(*param) : nullptr;
  if (value == nullptr) return refuse("parameter '" + std::string(name) + "' is required");
  const std::string_view v(value);
  if (v == "true" || v == "1" || v == "yes" || v == "on") return true;
  if (v == "false" || v == "0" || v == "no" || v == "off") return false;
  return refuse(out_of_range(name, quoted(value), "use true or false"));
}

core::Result<std::string> ParamReader::text(const char* name) const {
  const weir_shard_param* param = declared(name);
  const char* value = param != nullptr ? value_of(*param) : nullptr;
  if (value == nullptr) return refuse("parameter '" + std::string(name) + "' is required");
  if (param->choices == nullptr) return std::string(value);
  const std::string_view choices(param->choices);
  for (std::size_t at = 0; at <= choices.size();) {
    const std::size_t bar = std::min(choices.find('|', at), choices.size());
    if (choices.substr(at, bar - at) == value) return std::string(value);
    at = bar + 1;
  }
  return refuse(out_of_range(name, quoted(value), "choose one of " + std::string(param->choices)));
}

core::Result<void> check_input(weir_shard_config& cfg, std::uint32_t dtypes) {
  cfg.output_count = 0;
  if (cfg.abi_version != WEIR_SHARD_ABI_VERSION || cfg.struct_size != sizeof(weir_shard_config))
    return refuse("host ABI " + std::to_string(cfg.abi_version) + " with a " + std::to_string(cfg.struct_size) +
                  "-byte config; this shard is ABI " + std::to_string(WEIR_SHARD_ABI_VERSION) + " with " +
                  std::to_string(sizeof(weir_shard_config)) + " bytes");
  const std::string input = cfg.input_channel != nullptr ? cfg.input_channel : "?";
  if (cfg.input_dtype >= 32 || (dtypes & (1U << cfg.input_dtype)) == 0)
    return refuse("input '" + input + "' has dtype " + std::to_string(cfg.input_dtype) +
                  (cfg.input_dtype == WEIR_DTYPE_C64 ? " (c64)" : "") +
                  ": accepted are the real dtypes i8, u8, i16, u16, i32, u32, i64, f32, f64");
  if (!std::isfinite(cfg.input_rate_hz) || cfg.input_rate_hz <= 0)
    return refuse("input '" + input + "' has rate " + num(cfg.input_rate_hz) + " Hz: must be positive");
  if (cfg.input_samples_per_block == 0) return refuse("input '" + input + "' has 0 samples per block");
  if (cfg.output_base == nullptr || cfg.output_base[0] == '\0') return refuse("no output base name given");
  return {};
}

namespace {

core::Result<std::uint32_t> add_output(weir_shard_config& cfg, const char* suffix, const weir_shard_output& out) {
  if (cfg.output_count >= WEIR_SHARD_MAX_OUTPUTS)
    return refuse("more than " + std::to_string(WEIR_SHARD_MAX_OUTPUTS) + " outputs");
  const std::string name = std::string(cfg.output_base) + suffix;
  if (name.size() >= WEIR_SHARD_NAME_BYTES)
    return refuse("output name '" + name + "' is " + std::to_string(name.size()) + " bytes; at most " +
                  std::to_string(WEIR_SHARD_NAME_BYTES - 1) + " fit: use a shorter output base");
  weir_shard_output& slot = cfg.outputs[cfg.output_count];
  slot = out;
  std::memcpy(slot.name, name.c_str(), name.size() + 1);
  return cfg.output_count++;
}

}  // namespace

core::Result<std::uint32_t> add_key(weir_shard_config& cfg, const char* suffix, std::uint32_t key_type,
                                    std::uint64_t max_bytes) {
  weir_shard_output out{};
  out.kind = WEIR_OUTPUT_KEY;
  out.key_type = key_type;
  out.max_bytes = max_bytes;
  return add_output(cfg, suffix, out);
}

core::Result<std::uint32_t> add_channel(weir_shard_config& cfg, const char* suffix, std::uint32_t dtype,
                                        double rate_hz, std::uint32_t samples_per_block) {
  weir_shard_output out{};
  out.kind = WEIR_OUTPUT_CHANNEL;
  out.dtype = dtype;
  out.rate_hz = rate_hz;
  out.samples_per_block = samples_per_block;
  if (cfg.input_units != nullptr) {  // same units as the input, truncated to the field
    const std::size_t n = std::min(std::strlen(cfg.input_units), sizeof(out.units) - 1);
    std::memcpy(out.units, cfg.input_units, n);
  }
  return add_output(cfg, suffix, out);
}

std::uint32_t dtype_bytes(std::uint32_t dtype) noexcept {
  switch (dtype) {
    case WEIR_DTYPE_I8: case WEIR_DTYPE_U8: return 1;
    case WEIR_DTYPE_I16: case WEIR_DTYPE_U16: return 2;
    case WEIR_DTYPE_I32: case WEIR_DTYPE_U32: case WEIR_DTYPE_F32: return 4;
    case WEIR_DTYPE_I64: case WEIR_DTYPE_F64: return 8;
    default: return 0;
  }
}

void to_double(std::uint32_t dtype, const void* samples, std::size_t first, std::size_t count, double* out) noexcept {
  switch (dtype) {
    case WEIR_DTYPE_I8: convert<std::int8_t>(samples, first, count, out); break;
    case WEIR_DTYPE_U8: convert<std::uint8_t>(samples, first, count, out); break;
    case WEIR_DTYPE_I16: convert<std::int16_t>(samples, first, count, out); break;
    case WEIR_DTYPE_U16: convert<std::uint16_t>(samples, first, count, out); break;
    case WEIR_DTYPE_I32: convert<std::int32_t>(samples, first, count, out); break;
    case WEIR_DTYPE_U32: convert<std::uint32_t>(samples, first, count, out); break;
    case WEIR_DTYPE_I64: convert<std::int64_t>(samples, first, count, out); break;
    case WEIR_DTYPE_F32: convert<float>(samples, first, count, out); break;
    case WEIR_DTYPE_F64: convert<double>(samples, first, count, out); break;
    default: break;  // configure refused every other dtype
  }
}

void put_u64_le(std::uint64_t value, unsigned char (&out)[8]) noexcept {
  for (unsigned char& byte : out) {
    byte = static_cast<unsigned char>(value & 0xFFU);
    value >>= 8;
  }
}

void write_error(char* error, std::size_t error_bytes, const char* kind, const std::string& message) noexcept {
  if (error == nullptr || error_bytes == 0) return;
  std::snprintf(error, error_bytes, "%s: %s", kind, message.c_str());
}

}  // namespace weir::dsp::detail

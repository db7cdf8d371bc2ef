#include "shard_params.hpp"

#include <cmath>
#include <cstring>

#include "weir/core/arena_layout.hpp"
#include "weir/core/channel.hpp"
#include "weir/dsp/detail/number_text.hpp"
#include "weir/dsp/sample_convert.hpp"

namespace weir::dsp::detail {

core::Error bad(std::string_view name, std::string_view value, const std::string& why) {
  return core::Error{core::Errc::invalid_argument,
                     "parameter " + std::string(name) + " = '" + std::string(value) + "': " + why};
}

std::string spectral_wording(const ParamProblem& problem) {
  const weir_shard_param* p = problem.param;
  switch (problem.kind) {
    case ParamProblem::Kind::required:
      return "parameter " + std::string(problem.name) + " is required and was not given";
    case ParamProblem::Kind::not_integer: return bad(problem.name, problem.value, "not an integer").what;
    case ParamProblem::Kind::not_number: return bad(problem.name, problem.value, "not a finite number").what;
    case ParamProblem::Kind::not_boolean:
      return bad(problem.name, problem.value, "not a boolean; use true or false").what;
    case ParamProblem::Kind::not_choice:
      return bad(problem.name, problem.value, "not one of " + std::string(p->choices)).what;
    case ParamProblem::Kind::out_of_range:
      return bad(problem.name, problem.value, "out of range; allowed " + num(p->min) + " .. " + num(p->max)).what;
  }
  return bad(problem.name, problem.value, "refused").what;
}

core::Result<void> check_input(const weir_shard_config& cfg) {
  if (cfg.abi_version != WEIR_SHARD_ABI_VERSION || cfg.struct_size != sizeof(weir_shard_config))
    return core::fail(core::Errc::invalid_argument,
                      "host ABI " + std::to_string(cfg.abi_version) + " with config size " +
                          std::to_string(cfg.struct_size) + "; this shard needs ABI " +
                          std::to_string(WEIR_SHARD_ABI_VERSION) + " and size " +
                          std::to_string(sizeof(weir_shard_config)));
  const std::string channel = cfg.input_channel != nullptr ? cfg.input_channel : "";
  const auto dtype = static_cast<core::Dtype>(cfg.input_dtype);
  if (!is_real_dtype(dtype))
    return core::fail(core::Errc::invalid_argument,
                      "input channel '" + channel + "' has dtype " + core::dtype_name(dtype) +
                          "; accepted: i8, u8, i16, u16, i32, u32, i64, f32, f64");
  if (!std::isfinite(cfg.input_rate_hz) || cfg.input_rate_hz <= 0)
    return core::fail(core::Errc::invalid_argument, "input channel '" + channel + "' has sample rate " +
                                                        num(cfg.input_rate_hz) + " Hz; a positive rate is needed");
  if (cfg.input_samples_per_block == 0)
    return core::fail(core::Errc::invalid_argument, "input channel '" + channel + "' has empty blocks");
  return {};
}

std::string output_name(const weir_shard_config& cfg, const char* suffix) {
  const std::string input = cfg.input_channel != nullptr ? cfg.input_channel : "";
  const std::string base = cfg.output_base != nullptr ? cfg.output_base : "";
  if (!base.empty() && base != input) return base;
  return input + "." + suffix;
}

core::Result<void> declare_channel(weir_shard_config& cfg, const std::string& name, double rate_hz,
                                   std::uint32_t samples_per_block, const std::string& units) {
  weir_shard_output out{};
  if (name.empty() || name.size() >= sizeof(out.name))
    return core::fail(core::Errc::invalid_argument,
                      "output name '" + name + "' must be 1 .. " + std::to_string(sizeof(out.name) - 1) + " bytes");
  if (units.size() >= sizeof(out.units))
    return core::fail(core::Errc::invalid_argument, "output units '" + units + "' are longer than " +
                                                        std::to_string(sizeof(out.units) - 1) + " bytes");
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

core::Result<std::uint32_t> declare_key(weir_shard_config& cfg, const std::string& name, std::uint32_t key_type,
                                        std::uint64_t max_bytes) {
  weir_shard_output out{};
  if (name.empty() || name.size() >= sizeof(out.name))
    return core::fail(core::Errc::invalid_argument,
                      "output name '" + name + "' must be 1 .. " + std::to_string(sizeof(out.name) - 1) + " bytes");
  if (cfg.output_count >= WEIR_SHARD_MAX_OUTPUTS)
    return core::fail(core::Errc::invalid_argument, "more than " + std::to_string(WEIR_SHARD_MAX_OUTPUTS) + " outputs");
  std::memcpy(out.name, name.c_str(), name.size() + 1);
  out.kind = WEIR_OUTPUT_KEY;
  out.key_type = key_type;
  out.max_bytes = max_bytes;
  cfg.outputs[cfg.output_count] = out;
  return cfg.output_count++;
}

}  // namespace weir::dsp::detail

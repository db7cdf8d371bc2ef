#include "shard_params.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "weir/core/event_record.hpp"
#include "weir/dsp/detail/number_text.hpp"
#include "weir/dsp/shard_outputs.hpp"

namespace weir::dsp::detail {

namespace {

tl::unexpected<core::Error> refuse(std::string why) {
  return core::fail(core::Errc::invalid_argument, std::move(why));
}

std::string quoted(const char* text) { return "'" + std::string(text != nullptr ? text : "") + "'"; }

}  // namespace

std::string out_of_range(const char* name, const std::string& value, const std::string& allowed) {
  return "parameter '" + std::string(name) + "' = " + value + ": " + allowed;
}

std::string events_wording(const ParamProblem& problem) {
  const std::string name(problem.name);
  const std::string value(problem.value);
  const weir_shard_param* p = problem.param;
  switch (problem.kind) {
    case ParamProblem::Kind::required: return "parameter '" + name + "' is required";
    case ParamProblem::Kind::not_integer: return out_of_range(name.c_str(), quoted(value.c_str()), "not an integer");
    case ParamProblem::Kind::not_number:
      return out_of_range(name.c_str(), quoted(value.c_str()), "not a finite number");
    case ParamProblem::Kind::not_boolean: return out_of_range(name.c_str(), quoted(value.c_str()), "use true or false");
    case ParamProblem::Kind::not_choice:
      return out_of_range(name.c_str(), quoted(value.c_str()), "choose one of " + std::string(p->choices));
    case ParamProblem::Kind::out_of_range:
      return out_of_range(name.c_str(), value, "allowed " + num(p->min) + " to " + num(p->max));
  }
  return out_of_range(name.c_str(), quoted(value.c_str()), "refused");
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
                                    std::uint64_t max_bytes, std::string_view units) {
  weir_shard_output out{};
  out.kind = WEIR_OUTPUT_KEY;
  out.key_type = key_type;
  out.max_bytes = max_bytes;
  if (!units.empty()) std::memcpy(out.units, units.data(), std::min(units.size(), sizeof out.units - 1));
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

core::Result<std::uint32_t> add_pulses(weir_shard_config& cfg, std::uint32_t max_events, const std::string& units) {
  // As many blocks a second as the input has: a block per input block.
  const std::uint32_t block = max_events * core::kEventFields;
  auto out = add_channel(cfg, ".pulses", WEIR_DTYPE_F64, cfg.input_rate_hz * block / cfg.input_samples_per_block, block);
  if (!out) return out;
  weir_shard_output& o = cfg.outputs[*out];
  std::memset(o.units, 0, sizeof o.units);
  std::memcpy(o.units, units.data(), std::min(units.size(), sizeof o.units - 1));
  if (auto framed = set_frames(o, core::kEventFields, OutputAxis{core::kEventAxisName, "", 0.0, 1.0}); !framed)
    return tl::make_unexpected(framed.error());
  return out;
}

void put_event(double* record, double offset_ns, double height, std::uint32_t id, std::uint32_t flags) noexcept {
  record[static_cast<std::size_t>(core::EventField::time_offset_ns)] = std::round(offset_ns);
  record[static_cast<std::size_t>(core::EventField::height)] = height;
  record[static_cast<std::size_t>(core::EventField::id)] = id;
  record[static_cast<std::size_t>(core::EventField::flags)] = flags;
}

void put_u64_le(std::uint64_t value, unsigned char (&out)[8]) noexcept {
  for (unsigned char& byte : out) {
    byte = static_cast<unsigned char>(value & 0xFFU);
    value >>= 8;
  }
}

}  // namespace weir::dsp::detail

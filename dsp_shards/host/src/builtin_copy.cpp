// The `copy` built-in: republishes every input block unchanged, same dtype, block size, rate and
// units, as the channel <base>.<suffix>. A tee for tests and for moving a stream under a new name.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "weir/core/arena_layout.hpp"
#include "weir/core/channel.hpp"
#include "weir/dsp/shard_adapter.hpp"
#include "weir/shard_host/builtin.hpp"

namespace {

struct CopyShard {
  static constexpr const char* kKind = "copy";
  static constexpr const char* kDescription = "republishes every input block unchanged as the channel <base>.<suffix>";
  static constexpr weir_shard_param kParams[] = {
      {"suffix", WEIR_PARAM_TEXT, 0, "copy", 0, 0, nullptr, "output channel is <base>.<suffix>"},
      {"labels", WEIR_PARAM_TEXT, 0, "", 0, 0, nullptr, "comma-separated Bloom labels of the output channel"},
  };
  static constexpr std::uint32_t kInputDtypes = weir::shard_host::kAllDtypes;
  static constexpr bool kErrorsNameKind = false;  // the host names the shard

  static weir::core::Result<std::unique_ptr<CopyShard>> configure(weir_shard_config& cfg);
  int process(const weir_shard_block& in, const weir_shard_host& host) noexcept;

  std::uint32_t sample_bytes = 0;
};

const char* param(const weir_shard_config& cfg, const char* name) {
  for (std::uint32_t i = 0; i < cfg.param_count; ++i)
    if (std::strcmp(cfg.param_names[i], name) == 0) return cfg.param_values[i];
  return "";
}

weir::core::Result<std::unique_ptr<CopyShard>> CopyShard::configure(weir_shard_config& cfg) {
  const std::string name = std::string(cfg.output_base) + "." + param(cfg, "suffix");
  weir_shard_output& out = cfg.outputs[0];
  out = weir_shard_output{};
  using weir::dsp::put_text;
  if (!put_text(out.name, name) || !put_text(out.labels, param(cfg, "labels")) || !put_text(out.units, cfg.input_units))
    return weir::core::fail(weir::core::Errc::invalid_argument,
                            "output '" + name + "', its labels or units are too long");
  out.kind = WEIR_OUTPUT_CHANNEL;
  out.dtype = cfg.input_dtype;
  out.rate_hz = cfg.input_rate_hz;
  out.samples_per_block = cfg.input_samples_per_block;
  cfg.output_count = 1;
  auto shard = std::make_unique<CopyShard>();
  shard->sample_bytes = weir::core::dtype_bytes(static_cast<weir::core::Dtype>(cfg.input_dtype));
  return shard;
}

int CopyShard::process(const weir_shard_block& in, const weir_shard_host& host) noexcept {
  std::uint32_t capacity = 0;
  void* dst = host.claim(host.self, 0, &capacity);
  if (dst == nullptr) return 0;  // dropped at the source for a full lossless reader: counted there
  const std::uint32_t n = std::min(in.count, capacity);
  std::memcpy(dst, in.samples, std::size_t{n} * sample_bytes);
  host.publish(host.self, 0, n, in.realtime_ns, in.flags);
  return 0;
}

}  // namespace

extern "C" const weir_shard_api* weir_builtin_copy(std::uint32_t v) { return weir::dsp::shard_entry<CopyShard>(v); }

// The "trigger" shard: every capture becomes one block of the f32 channel <output>.events, dated at
// its trigger sample; <output>.triggers counts the captures started.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "shard_params.hpp"
#include "weir/dsp/event_shards.hpp"
#include "weir/dsp/trigger.hpp"

namespace weir::dsp {

namespace {

constexpr const char* kKind = "trigger";
constexpr double kMaxCapture = Trigger::kMaxCaptureSamples;
constexpr double kMaxSignal = 1e300;           // any finite level a sample can reach
constexpr double kMaxHoldoff = 4611686018427387904.0;  // 2^62 samples: no practical limit

constexpr weir_shard_param kParams[] = {
    {"mode", WEIR_PARAM_TEXT, 0, "rising", 0, 0, "level|rising|falling|both",
     "level: at or above the level; rising/falling/both: crossing it (edges)"},
    {"level", WEIR_PARAM_REAL, 0, "0", -kMaxSignal, kMaxSignal, nullptr, "trigger level, in input units"},
    {"hysteresis", WEIR_PARAM_REAL, 0, "0", 0, kMaxSignal, nullptr,
     "re-arm only after the signal is back beyond level -+ hysteresis (input units)"},
    {"pre", WEIR_PARAM_INT, 0, "256", 0, kMaxCapture, nullptr, "samples before the trigger sample in a capture"},
    {"post", WEIR_PARAM_INT, 0, "768", 0, kMaxCapture, nullptr,
     "samples from the trigger sample on in a capture (pre + post >= 1)"},
    {"holdoff", WEIR_PARAM_INT, 0, "0", 0, kMaxHoldoff, nullptr, "samples after a capture during which nothing fires"},
};

struct TriggerShard {
  explicit TriggerShard(Trigger t) : trigger(std::move(t)) {}
  Trigger trigger;
  std::uint32_t dtype = 0;
  std::vector<double> scratch;
  std::uint32_t events = 0, triggers = 0;  // output indices
  std::uint64_t published_triggers = ~0ULL;
  std::uint64_t dropped = 0;    // captures the host could not take (claim returned NULL)
  std::uint64_t truncated = 0;  // captures longer than the claimed block
};

core::Result<std::unique_ptr<TriggerShard>> make(weir_shard_config& cfg) {
  if (auto ok = detail::check_input(cfg, detail::kRealDtypes); !ok) return tl::make_unexpected(ok.error());
  const detail::ParamReader params(kParams, cfg);
  if (auto ok = params.check_names(); !ok) return tl::make_unexpected(ok.error());
  auto mode_text = params.text("mode");
  if (!mode_text) return tl::make_unexpected(mode_text.error());
  auto mode = parse_trigger_mode(mode_text->c_str());
  if (!mode) return tl::make_unexpected(mode.error());
  auto level = params.real("level");
  if (!level) return tl::make_unexpected(level.error());
  auto hysteresis = params.real("hysteresis");
  if (!hysteresis) return tl::make_unexpected(hysteresis.error());
  auto pre = params.integer("pre");
  if (!pre) return tl::make_unexpected(pre.error());
  auto post = params.integer("post");
  if (!post) return tl::make_unexpected(post.error());
  auto holdoff = params.integer("holdoff");
  if (!holdoff) return tl::make_unexpected(holdoff.error());

  const std::int64_t total = *pre + *post;
  if (total < 1 || total > static_cast<std::int64_t>(Trigger::kMaxCaptureSamples))
    return core::fail(core::Errc::invalid_argument,
                      detail::out_of_range("pre + post", std::to_string(*pre) + " + " + std::to_string(*post),
                                           "a capture holds 1 to " + std::to_string(Trigger::kMaxCaptureSamples) +
                                               " samples"));
  TriggerConfig config;
  config.mode = *mode;
  config.level = *level;
  config.hysteresis = *hysteresis;
  config.pre = static_cast<std::uint32_t>(*pre);
  config.post = static_cast<std::uint32_t>(*post);
  config.holdoff = static_cast<std::uint64_t>(*holdoff);
  config.rate_hz = cfg.input_rate_hz;
  auto trigger = Trigger::create(config);
  if (!trigger) return tl::make_unexpected(trigger.error());

  auto shard = std::make_unique<TriggerShard>(std::move(*trigger));
  shard->dtype = cfg.input_dtype;
  shard->scratch.resize(cfg.input_samples_per_block);
  auto events = detail::add_channel(cfg, ".events", WEIR_DTYPE_F32, cfg.input_rate_hz,
                                    static_cast<std::uint32_t>(total));
  if (!events) return tl::make_unexpected(events.error());
  auto triggers = detail::add_key(cfg, ".triggers", WEIR_KEY_U64, sizeof(std::uint64_t));
  if (!triggers) return tl::make_unexpected(triggers.error());
  shard->events = *events;
  shard->triggers = *triggers;
  return shard;
}

weir_shard* configure(weir_shard_config* cfg, char* error, size_t error_bytes) {
  return detail::configure_c(kKind, cfg, error, error_bytes, make);
}

int process(weir_shard* handle, const weir_shard_block* in, const weir_shard_host* host) noexcept {
  auto* shard = reinterpret_cast<TriggerShard*>(handle);
  if (shard == nullptr || in == nullptr || host == nullptr || (in->count > 0 && in->samples == nullptr)) return -1;
  auto emit = [shard, host](const Capture& capture) noexcept {
    std::uint32_t capacity = 0;
    void* out = host->claim(host->self, shard->events, &capacity);
    if (out == nullptr) {
      ++shard->dropped;
      return;
    }
    const auto n = static_cast<std::uint32_t>(std::min<std::size_t>(capacity, capture.samples.size()));
    if (n < capture.samples.size()) ++shard->truncated;
    std::memcpy(out, capture.samples.data(), n * sizeof(float));
    host->publish(host->self, shard->events, n, capture.trigger_realtime_ns, 0);
  };
  const StreamTime time{in->first_sample, in->realtime_ns};
  const std::size_t chunk = shard->scratch.size();
  for (std::size_t at = 0; at < in->count; at += chunk) {
    const std::size_t n = std::min<std::size_t>(chunk, in->count - at);
    detail::to_double(shard->dtype, in->samples, at, n, shard->scratch.data());
    shard->trigger.process(std::span<const double>(shard->scratch.data(), n), in->first_sample + at, time, emit);
  }
  const std::uint64_t count = shard->trigger.counters().triggers;
  if (count != shard->published_triggers) {
    unsigned char bytes[8];
    detail::put_u64_le(count, bytes);
    if (host->set_key(host->self, shard->triggers, bytes, sizeof bytes) == 0) shard->published_triggers = count;
  }
  return 0;
}

void stop(weir_shard* handle) { delete reinterpret_cast<TriggerShard*>(handle); }

constexpr weir_shard_api kApi = {
    WEIR_SHARD_ABI_VERSION,
    sizeof(weir_shard_api),
    kKind,
    "level or edge trigger with hysteresis, pre/post-trigger capture and hold-off",
    kParams,
    sizeof(kParams) / sizeof(kParams[0]),
    detail::kRealDtypes,
    configure,
    process,
    stop,
};

}  // namespace

}  // namespace weir::dsp

extern "C" const weir_shard_api* weir_builtin_trigger(uint32_t host_abi_version) {
  return host_abi_version == WEIR_SHARD_ABI_VERSION ? &weir::dsp::kApi : nullptr;
}

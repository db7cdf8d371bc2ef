// The "trigger" shard: every capture becomes one block of the f32 channel <output>.events, dated at
// its trigger sample, declared as frames of pre + post elements along time (s, 0 at the trigger
// sample); <output>.triggers counts the captures started. Each capture is also a pulse on the event
// channel <output>.pulses (core/event_record.hpp): its trigger time and its height (the extreme of
// the capture from the trigger sample on: the highest for a rising or level trigger, the lowest for
// a falling one), a block per input block.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "shard_params.hpp"
#include "weir/core/event_record.hpp"
#include "weir/dsp/detail/number_text.hpp"
#include "weir/dsp/sample_convert.hpp"
#include "weir/dsp/shard_adapter.hpp"
#include "weir/dsp/shard_outputs.hpp"
#include "weir/dsp/event_shards.hpp"
#include "weir/dsp/trigger.hpp"

namespace weir::dsp {

namespace {

constexpr double kMaxCapture = Trigger::kMaxCaptureSamples;
constexpr double kMaxSignal = 1e300;           // any finite level a sample can reach
constexpr double kMaxHoldoff = 4611686018427387904.0;  // 2^62 samples: no practical limit

constexpr weir_shard_param kTriggerParams[] = {
    {"mode", WEIR_PARAM_TEXT, 0, "rising", 0, 0, "level|rising|falling|both",
     "level: at or above the level; rising/falling/both: crossing it (edges)"},
    {"level", WEIR_PARAM_REAL, 0, "0", -kMaxSignal, kMaxSignal, nullptr, "trigger level, in input units"},
    {"hysteresis", WEIR_PARAM_REAL, 0, "0", 0, kMaxSignal, nullptr,
     "re-arm only after the signal is back beyond level -+ hysteresis (input units)"},
    {"pre", WEIR_PARAM_INT, 0, "256", 0, kMaxCapture, nullptr, "samples before the trigger sample in a capture"},
    {"post", WEIR_PARAM_INT, 0, "768", 0, kMaxCapture, nullptr,
     "samples from the trigger sample on in a capture (pre + post >= 1)"},
    {"holdoff", WEIR_PARAM_INT, 0, "0", 0, kMaxHoldoff, nullptr, "samples after a capture during which nothing fires"},
    {"max_pulses", WEIR_PARAM_INT, 0, "64", 1, 65536, nullptr,
     "pulses one input block's block of <output>.pulses holds; more are counted in <output>.pulses_dropped"},
};

struct TriggerShard {
  static constexpr const char* kKind = "trigger";
  static constexpr const char* kDescription = "level or edge trigger with hysteresis, pre/post-trigger capture and hold-off";
  static constexpr const auto& kParams = kTriggerParams;
  static constexpr std::uint32_t kInputDtypes = kRealDtypes;
  static core::Result<std::unique_ptr<TriggerShard>> configure(weir_shard_config& cfg);
  int process(const weir_shard_block& in, const weir_shard_host& host) noexcept;
  void add_pulse(const Capture& capture, const weir_shard_block& in) noexcept;
  void publish_pulses(const weir_shard_block& in, const weir_shard_host& host) noexcept;

  explicit TriggerShard(Trigger t) : trigger(std::move(t)) {}
  Trigger trigger;
  std::uint32_t dtype = 0;
  std::vector<double> scratch;
  bool rising = true;      // a pulse's height is its capture's highest sample (else its lowest)
  std::uint32_t pre = 0;   // samples before the trigger sample in a capture
  std::uint32_t events = 0, triggers = 0;  // output indices
  std::uint64_t published_triggers = ~0ULL;
  std::uint64_t dropped = 0;    // captures the host could not take (claim returned NULL)
  std::uint64_t truncated = 0;  // captures longer than the claimed block
  std::uint32_t pulses = 0, pulses_dropped = 0;  // output indices
  std::vector<double> pending;  // pulse records finished in this input block (kEventFields each)
  std::uint32_t pending_count = 0;
  std::uint64_t lost_pulses = 0, lost_written = 0;  // pulses with no room in their block
};

core::Result<std::unique_ptr<TriggerShard>> TriggerShard::configure(weir_shard_config& cfg) {
  if (auto ok = detail::check_input(cfg, kRealDtypes); !ok) return tl::make_unexpected(ok.error());
  const ParamReader params(kParams, cfg, detail::events_wording);
  if (auto ok = params.check_names(); !ok) return tl::make_unexpected(ok.error());
  auto mode_text = params.text("mode");
  if (!mode_text) return tl::make_unexpected(mode_text.error());
  auto mode = parse_trigger_mode(std::string(*mode_text).c_str());
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
  // One capture per block: its elements along time relative to the trigger sample (element `pre`).
  const double period_s = 1.0 / cfg.input_rate_hz;
  const OutputAxis time{"time", "s", -static_cast<double>(config.pre) * period_s, period_s};
  if (auto framed = set_frames(cfg.outputs[*events], static_cast<std::uint32_t>(total), time); !framed)
    return tl::make_unexpected(framed.error());
  auto triggers = detail::add_key(cfg, ".triggers", WEIR_KEY_U64, sizeof(std::uint64_t), "counts");
  if (!triggers) return tl::make_unexpected(triggers.error());
  shard->events = *events;
  shard->triggers = *triggers;
  auto max_pulses = params.integer("max_pulses");
  if (!max_pulses) return tl::make_unexpected(max_pulses.error());
  auto pulses = detail::add_pulses(cfg, static_cast<std::uint32_t>(*max_pulses),
                                   cfg.input_units != nullptr ? cfg.input_units : "");
  if (!pulses) return tl::make_unexpected(pulses.error());
  auto pulses_dropped = detail::add_key(cfg, ".pulses_dropped", WEIR_KEY_U64, sizeof(std::uint64_t), "counts");
  if (!pulses_dropped) return tl::make_unexpected(pulses_dropped.error());
  shard->pulses = *pulses;
  shard->pulses_dropped = *pulses_dropped;
  shard->pending.resize(static_cast<std::size_t>(*max_pulses) * core::kEventFields);
  shard->rising = config.mode != TriggerMode::falling;
  shard->pre = config.pre;
  return shard;
}

int TriggerShard::process(const weir_shard_block& in, const weir_shard_host& host) noexcept {
  auto emit = [this, &host, &in](const Capture& capture) noexcept {
    add_pulse(capture, in);
    std::uint32_t capacity = 0;
    void* out = host.claim(host.self, events, &capacity);
    if (out == nullptr) {
      ++dropped;
      return;
    }
    const auto n = static_cast<std::uint32_t>(std::min<std::size_t>(capacity, capture.samples.size()));
    if (n < capture.samples.size()) ++truncated;
    std::memcpy(out, capture.samples.data(), n * sizeof(float));
    host.publish(host.self, events, n, capture.trigger_realtime_ns, 0);
  };
  if ((in.flags & WEIR_SHARD_AFTER_GAP) != 0) trigger.mark_gap();  // no capture spans a gap
  const StreamTime time{in.first_sample, in.realtime_ns};
  const std::size_t chunk = scratch.size();
  for (std::size_t at = 0; at < in.count; at += chunk) {
    const std::size_t n = std::min<std::size_t>(chunk, in.count - at);
    to_double(static_cast<core::Dtype>(dtype), in.samples, at, std::span<double>(scratch.data(), n));
    trigger.process(std::span<const double>(scratch.data(), n), in.first_sample + at, time, emit);
  }
  publish_pulses(in, host);
  const std::uint64_t count = trigger.counters().triggers;
  if (count != published_triggers) {
    unsigned char bytes[8];
    detail::put_u64_le(count, bytes);
    if (host.set_key(host.self, triggers, bytes, sizeof bytes) == 0) published_triggers = count;
  }
  return 0;
}


void TriggerShard::add_pulse(const Capture& capture, const weir_shard_block& in) noexcept {
  if (pending_count * core::kEventFields >= pending.size()) {
    ++lost_pulses;
    return;
  }
  const std::span<const float> from = capture.samples.subspan(std::min<std::size_t>(pre, capture.samples.size()));
  double height = from.empty() ? 0.0 : static_cast<double>(from[0]);
  for (const float v : from) height = rising ? std::max(height, static_cast<double>(v)) : std::min(height, static_cast<double>(v));
  // Its time against this input block's stamp: negative when it fired in an earlier block.
  const double offset_ns = static_cast<double>(static_cast<std::int64_t>(capture.trigger_realtime_ns - in.realtime_ns));
  detail::put_event(pending.data() + std::size_t{pending_count} * core::kEventFields, offset_ns, height, 0, 0);
  ++pending_count;
}

void TriggerShard::publish_pulses(const weir_shard_block& in, const weir_shard_host& host) noexcept {
  std::uint32_t capacity = 0;
  void* out = host.claim(host.self, pulses, &capacity);
  if (out != nullptr) {  // NULL: the block was dropped at the source (the arena counts it)
    const std::uint32_t n = std::min(pending_count, capacity / core::kEventFields);
    std::memcpy(out, pending.data(), std::size_t{n} * core::kEventFields * sizeof(double));
    host.publish(host.self, pulses, n * core::kEventFields, in.realtime_ns, 0);
    lost_pulses += pending_count - n;
  }
  pending_count = 0;
  if (lost_pulses != lost_written) {
    unsigned char bytes[8];
    detail::put_u64_le(lost_pulses, bytes);
    if (host.set_key(host.self, pulses_dropped, bytes, sizeof bytes) == 0) lost_written = lost_pulses;
  }
}

}  // namespace

}  // namespace weir::dsp

extern "C" const weir_shard_api* weir_builtin_trigger(uint32_t v) { return weir::dsp::shard_entry<weir::dsp::TriggerShard>(v); }

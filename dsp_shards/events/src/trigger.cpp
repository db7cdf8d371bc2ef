#include "weir/dsp/trigger.hpp"

#include <cmath>
#include <cstring>
#include <string>

#include "weir/dsp/detail/number_text.hpp"

namespace weir::dsp {

namespace {

struct ModeName {
  TriggerMode mode;
  const char* name;
};
constexpr ModeName kModes[] = {{TriggerMode::level, "level"},
                               {TriggerMode::rising, "rising"},
                               {TriggerMode::falling, "falling"},
                               {TriggerMode::both, "both"}};

}  // namespace

core::Result<TriggerMode> parse_trigger_mode(const char* text) {
  for (const auto& m : kModes)
    if (text != nullptr && std::strcmp(text, m.name) == 0) return m.mode;
  return core::fail(core::Errc::invalid_argument, "mode '" + std::string(text != nullptr ? text : "") +
                                                      "': use level, rising, falling or both");
}

const char* trigger_mode_name(TriggerMode mode) noexcept {
  for (const auto& m : kModes)
    if (m.mode == mode) return m.name;
  return "unknown";
}

core::Result<Trigger> Trigger::create(const TriggerConfig& config) {
  const auto refuse = [](const std::string& why) { return core::fail(core::Errc::invalid_argument, why); };
  const std::uint64_t total = std::uint64_t{config.pre} + config.post;
  if (total == 0 || total > kMaxCaptureSamples)
    return refuse("pre + post = " + std::to_string(total) + ": a capture holds 1 to " +
                  std::to_string(kMaxCaptureSamples) + " samples");
  if (!std::isfinite(config.level)) return refuse("level = " + detail::num(config.level) + ": must be finite");
  if (!std::isfinite(config.hysteresis) || config.hysteresis < 0)
    return refuse("hysteresis = " + detail::num(config.hysteresis) + ": must be finite and >= 0");
  if (!std::isfinite(config.rate_hz) || config.rate_hz <= 0)
    return refuse("input rate = " + detail::num(config.rate_hz) + " Hz: must be positive");
  return Trigger(config);
}

Trigger::Trigger(const TriggerConfig& config)
    : config_(config), history_(config.pre), capture_(std::size_t{config.pre} + config.post) {
  restart();
}

void Trigger::restart() noexcept {
  history_at_ = 0;
  history_count_ = 0;
  capturing_ = false;
  capture_fill_ = 0;
  armed_up_ = config_.mode == TriggerMode::level;  // a level trigger needs no edge to fire
  armed_down_ = false;
  dead_until_ = 0;
}

void Trigger::start_capture(std::uint64_t index, StreamTime time, bool rising) noexcept {
  const std::uint32_t pre = config_.pre;
  // history_at_ is the oldest of exactly `pre` samples here (the caller checked the count).
  if (pre > 0) {  // an empty history has no buffer, and memcpy must not see a null pointer
    const std::uint32_t head = pre - history_at_;
    std::memcpy(capture_.data(), history_.data() + history_at_, head * sizeof(float));
    std::memcpy(capture_.data() + head, history_.data(), history_at_ * sizeof(float));
  }
  capture_fill_ = pre;
  capturing_ = true;
  pending_.trigger_index = index;
  const double offset_ns = static_cast<double>(index - time.index) * 1e9 / config_.rate_hz;
  pending_.trigger_realtime_ns = time.realtime_ns + static_cast<std::uint64_t>(std::llround(offset_ns));
  pending_.rising = rising;
  dead_until_ = index + config_.post + config_.holdoff;
  ++counters_.triggers;
}

void Trigger::process(std::span<const double> x, std::uint64_t first_index, StreamTime time,
                      CaptureSink sink) noexcept {
  if (started_ && (first_index != next_index_ || gap_pending_)) {
    gap_pending_ = false;
    if (capturing_) ++counters_.aborted;
    ++counters_.gaps;
    restart();
  }
  started_ = true;
  next_index_ = first_index + x.size();

  const double level = config_.level;
  const double rearm_below = level - config_.hysteresis;
  const double rearm_above = level + config_.hysteresis;
  const bool watch_up = config_.mode != TriggerMode::falling;
  const bool watch_down = config_.mode == TriggerMode::falling || config_.mode == TriggerMode::both;
  const std::uint32_t pre = config_.pre;
  const std::uint32_t total = pre + config_.post;

  for (std::size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    const std::uint64_t index = first_index + i;
    bool fired = false, rising = true;
    if (watch_up) {
      if (armed_up_ && v >= level) {
        armed_up_ = false;
        fired = true;
      } else if (v < rearm_below) {
        armed_up_ = true;  // strictly beyond: with no hysteresis a sample at the level must not re-arm
      }
    }
    if (watch_down) {
      if (armed_down_ && v <= level) {
        armed_down_ = false;
        fired = true;
        rising = false;
      } else if (v > rearm_above) {
        armed_down_ = true;
      }
    }
    if (fired) {
      // A condition inside a capture or its hold-off is consumed (it disarms) rather than
      // postponed: an edge that happened during the dead time must not fire late.
      if (capturing_ || index < dead_until_ || history_count_ < pre) {
        ++counters_.suppressed;
      } else {
        start_capture(index, time, rising);
      }
    }
    if (capturing_ && capture_fill_ < total) capture_[capture_fill_++] = static_cast<float>(v);
    if (capturing_ && capture_fill_ == total) {
      Capture done = pending_;
      done.samples = std::span<const float>(capture_.data(), total);
      capturing_ = false;
      sink(done);
    }
    if (pre > 0) {
      history_[history_at_] = static_cast<float>(v);
      history_at_ = history_at_ + 1 == pre ? 0 : history_at_ + 1;
      if (history_count_ < pre) ++history_count_;
    }
  }
}

}  // namespace weir::dsp

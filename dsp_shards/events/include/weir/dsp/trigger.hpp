#pragma once
// A level / edge trigger with hysteresis, pre- and post-trigger capture and hold-off, fed block by
// block. Pre-trigger samples come from a history ring, so they may lie in earlier blocks; a capture
// may span any number of blocks. Semantics (arming, dead time, stream gaps) are in
// dsp_shards/events/README.md.
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "weir/core/error.hpp"

namespace weir::dsp {

enum class TriggerMode : std::uint8_t {
  level,    // fires while at or above the level; armed from the start
  rising,   // fires on crossing the level upwards, after having been below level - hysteresis
  falling,  // fires on crossing the level downwards, after having been above level + hysteresis
  both,     // rising or falling
};

/// "rising" -> TriggerMode::rising; fails naming the text and the choices. Thread: any.
[[nodiscard]] core::Result<TriggerMode> parse_trigger_mode(const char* text);
[[nodiscard]] const char* trigger_mode_name(TriggerMode mode) noexcept;

struct TriggerConfig {
  TriggerMode mode = TriggerMode::rising;
  double level = 0;
  double hysteresis = 0;       // >= 0, in signal units: re-arm only beyond level -+ hysteresis
  std::uint32_t pre = 0;       // samples before the trigger sample in a capture
  std::uint32_t post = 1;      // samples from the trigger sample on; pre + post >= 1
  std::uint64_t holdoff = 0;   // samples after a capture's end during which nothing fires
  double rate_hz = 0;          // for the trigger sample's timestamp
};

/// One capture: pre + post samples, the trigger sample at samples[pre] (when post > 0).
/// `samples` is valid only during the call that hands it out.
struct Capture {
  std::span<const float> samples;
  std::uint64_t trigger_index = 0;        // absolute stream index of the trigger sample
  std::uint64_t trigger_realtime_ns = 0;  // its time: block time + offset / rate
  bool rising = true;                     // which edge fired (level mode: true)
};

struct TriggerCounters {
  std::uint64_t triggers = 0;    // captures started
  std::uint64_t suppressed = 0;  // conditions met during a capture, its hold-off, or before `pre` samples of history
  std::uint64_t aborted = 0;     // captures cut short by a gap in the input
  std::uint64_t gaps = 0;        // discontinuities in the input's sample index
};

/// Where a block sits in time: its first sample's index and realtime.
struct StreamTime {
  std::uint64_t index = 0;
  std::uint64_t realtime_ns = 0;
};

/// A non-owning, non-allocating callable reference for completed captures. The referenced callable
/// must outlive the call to Trigger::process and must not throw.
class CaptureSink {
 public:
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, CaptureSink>)
  CaptureSink(F& f) noexcept  // NOLINT: implicit on purpose, like a function_ref
      : context_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* context, const Capture& capture) noexcept { (*static_cast<F*>(context))(capture); }) {}
  void operator()(const Capture& capture) const noexcept { call_(context_, capture); }

 private:
  void* context_;
  void (*call_)(void*, const Capture&) noexcept;
};

class Trigger {
 public:
  /// Validates and allocates the history ring and the capture buffer. Fails naming the field: pre +
  /// post of 0 or above kMaxCaptureSamples, a negative or non-finite hysteresis, a non-finite level,
  /// a rate that is not positive. Thread: control.
  [[nodiscard]] static core::Result<Trigger> create(const TriggerConfig& config);

  /// Runs the trigger over `x`, samples first_index, first_index + 1, ...; `time` dates the block.
  /// A first_index other than the one after the previous call's last sample is a gap: the history
  /// is cleared, a capture in progress is aborted, and arming starts over. Each completed capture is
  /// handed to `sink`. Hot path: no allocation. Thread: one DSP thread.
  void process(std::span<const double> x, std::uint64_t first_index, StreamTime time, CaptureSink sink) noexcept;

  /// Input went missing before the next process call even though its first_index continues (a
  /// gap the writer published carries no samples): that call treats its block as after a gap.
  void mark_gap() noexcept { gap_pending_ = started_; }

  [[nodiscard]] const TriggerCounters& counters() const noexcept { return counters_; }
  [[nodiscard]] const TriggerConfig& config() const noexcept { return config_; }
  [[nodiscard]] std::uint32_t capture_samples() const noexcept { return config_.pre + config_.post; }

  static constexpr std::uint32_t kMaxCaptureSamples = 1U << 24;  // 64 MiB of f32 per capture at most

 private:
  explicit Trigger(const TriggerConfig& config);
  void restart() noexcept;  // stream start or gap: no history, no capture, arming from scratch
  void start_capture(std::uint64_t index, StreamTime time, bool rising) noexcept;

  TriggerConfig config_;
  std::vector<float> history_;    // the last `pre` samples, a ring; history_at_ is the oldest
  std::uint32_t history_at_ = 0;
  std::uint32_t history_count_ = 0;
  std::vector<float> capture_;    // pre + post
  std::uint32_t capture_fill_ = 0;
  bool capturing_ = false;
  Capture pending_;               // the capture being filled: index, time, edge
  bool armed_up_ = false, armed_down_ = false;
  std::uint64_t dead_until_ = 0;  // first index at which a new trigger may fire
  std::uint64_t next_index_ = 0;  // expected first_index of the next call
  bool started_ = false;
  bool gap_pending_ = false;      // mark_gap(): the next call starts after a gap
  TriggerCounters counters_;
};

}  // namespace weir::dsp

#pragma once
// Multichannel analyser: digital pulse-height analysis of a preamplifier signal (exponentially
// decaying pulses on a baseline). A slow trapezoid (pole-zero corrected) measures heights, a fast
// trapezoid detects pulses, a baseline restorer removes the slow output's offset between pulses,
// pile-up inspection rejects overlapping pulses, and the accepted heights fill a histogram, with
// live and dead time kept for rate correction. The logic is set out in dsp_shards/events/README.md.
#include <cstdint>
#include <span>
#include <vector>

#include "weir/core/error.hpp"
#include "weir/dsp/trapezoid.hpp"

namespace weir::dsp {

/// Every time is in samples of the input stream; heights are in input units.
struct McaConfig {
  double rate_hz = 0;              // input sample rate, for the live and dead times in seconds
  std::uint32_t rise = 1;          // slow filter rise k (>= 1)
  std::uint32_t flat = 0;          // slow filter flat top m (>= 0)
  double tau = 0;                  // the pulses' decay time constant; 0: steps (no decay)
  std::uint32_t fast_rise = 1;     // fast filter rise (>= 1)
  std::uint32_t fast_flat = 0;     // fast filter flat top
  double threshold = 0;            // fast filter output that signals a pulse (> 0); re-arms below half of it
  std::uint32_t bins = 1024;       // kMinBins .. kMaxBins
  double range = 1;                // histogrammed heights (after gain) are [0, range)
  double gain = 1;                 // fine gain applied to measured heights (> 0)
  std::uint32_t baseline = 0;      // quiet slow-filter samples averaged for baseline restoration; 0: off
  bool pileup_reject = true;
  std::uint32_t max_events = 0;    // pulses kept as events between clear_events() calls; 0: none
};

/// One pulse as an event (max_events > 0): its trigger sample, its height after gain (NaN when it
/// was not measured: piled onto a pulse being measured, or cut by a gap) and what became of it.
struct McaEvent {
  std::uint64_t index = 0;  // the trigger sample's stream index
  double height = 0;
  std::uint32_t flags = 0;  // kMcaPileup | kMcaOutOfRange | kMcaCut
};
inline constexpr std::uint32_t kMcaPileup = 1U << 0;      // rejected (or merged) for pile-up
inline constexpr std::uint32_t kMcaOutOfRange = 1U << 1;  // accepted, outside the histogram's range
inline constexpr std::uint32_t kMcaCut = 1U << 2;         // its measurement was cut short by a gap

struct McaCounts {
  std::uint64_t accepted = 0;      // pulses measured and kept (including out_of_range ones)
  std::uint64_t piled_up = 0;      // pulses rejected for pile-up (without rejection: merged into another)
  std::uint64_t out_of_range = 0;  // accepted heights below 0 or at or above the range: underflow + overflow
  std::uint64_t underflow = 0;     // ... below 0 (or not a number)
  std::uint64_t overflow = 0;      // ... at or above the range
  std::uint64_t discarded = 0;     // measurements cut short by a gap in the input
  std::uint64_t gaps = 0;          // discontinuities in the input's sample index
  std::uint64_t real_samples = 0;  // input samples processed
  std::uint64_t dead_samples = 0;  // of those, the ones inside dead intervals (see README)
};

class Mca {
 public:
  /// Validates and allocates the filters, rings and histogram. Fails naming the field and its
  /// allowed range. Thread: control.
  [[nodiscard]] static core::Result<Mca> create(const McaConfig& config);

  /// Analyses samples first_index, first_index + 1, ... A first_index other than the one after the
  /// previous call's last sample is a gap: the filters restart and the next pile-up window of
  /// samples is dead while they settle. Hot path: no allocation. Thread: one DSP thread.
  void process(std::span<const double> x, std::uint64_t first_index) noexcept;

  /// Starts a new accumulation: the histogram, counters and baseline are zeroed (a pulse being
  /// measured is dropped), and the next process call starts the filters afresh whatever its
  /// first_index. Hot path: no allocation.
  void reset() noexcept;

  /// Counts per bin; bin i holds heights in [i, i + 1) * range / bins. Saturates at 2^32 - 1.
  [[nodiscard]] std::span<const std::uint32_t> spectrum() const noexcept { return spectrum_; }
  /// Counters, with dead time up to the last processed sample. Thread: the DSP thread.
  [[nodiscard]] McaCounts counts() const noexcept;
  [[nodiscard]] double real_s() const noexcept;
  [[nodiscard]] double dead_s() const noexcept;
  [[nodiscard]] double live_s() const noexcept { return real_s() - dead_s(); }
  /// Samples within which a second pulse counts as pile-up: slow length + trigger lag.
  [[nodiscard]] std::uint32_t pileup_window() const noexcept { return pileup_window_; }
  /// Samples the baseline restorer lags the input by, so a pulse's leading edge stays out of it.
  [[nodiscard]] std::uint32_t baseline_delay() const noexcept { return static_cast<std::uint32_t>(delay_.size()); }
  [[nodiscard]] const McaConfig& config() const noexcept { return config_; }
  /// The pulses finished (measured, rejected or cut) since the last clear_events(), in order; at
  /// most max_events of them, the rest counted by events_dropped(). Every pulse the counters count
  /// is one event: accepted + piled_up + discarded of them. Thread: the DSP thread.
  [[nodiscard]] std::span<const McaEvent> events() const noexcept { return {events_.data(), event_count_}; }
  void clear_events() noexcept { event_count_ = 0; }
  [[nodiscard]] std::uint64_t events_dropped() const noexcept { return events_dropped_; }

  static constexpr std::uint32_t kMinBins = 16;
  static constexpr std::uint32_t kMaxBins = 65536;
  static constexpr std::uint32_t kMaxBaselineSamples = 1U << 22;  // 32 MiB of baseline ring at most
  static constexpr std::uint32_t kRiseMargin = 4;  // samples a pulse's own rise may add to the trigger's lag

 private:
  Mca(const McaConfig& config, Trapezoid slow, Trapezoid fast);
  void restart(std::uint64_t index) noexcept;
  void on_trigger(std::uint64_t index) noexcept;
  void finalize() noexcept;
  void add_event(std::uint64_t index, double height, std::uint32_t flags) noexcept;
  void add_dead(std::uint64_t from, std::uint64_t to) noexcept;
  void push_baseline(double value) noexcept;
  [[nodiscard]] double baseline_value() const noexcept {
    return baseline_count_ > 0 ? baseline_sum_ / static_cast<double>(baseline_count_) : 0.0;
  }

  McaConfig config_;
  Trapezoid slow_, fast_;
  std::uint32_t pileup_window_;         // L
  double rearm_level_;                  // threshold / 2
  double bins_per_unit_;                // bins / range
  std::vector<std::uint32_t> spectrum_;
  std::vector<double> delay_;           // slow output, the last G samples; delay_at_ is the oldest
  std::uint32_t delay_at_ = 0;
  std::vector<double> baseline_ring_;   // quiet slow-output samples; baseline_at_ is the oldest
  std::uint32_t baseline_at_ = 0, baseline_count_ = 0;
  double baseline_sum_ = 0;
  double offset_ = 0;                   // the first sample after a restart: keeps the filter sums small
  bool need_offset_ = true;
  bool armed_ = false;
  bool pending_ = false;                // a pulse is being measured
  bool pending_piled_ = false;
  std::uint64_t pending_end_ = 0;       // its trigger index + L
  std::uint64_t pending_index_ = 0;     // its trigger index
  double peak_ = 0;                     // highest slow output since its trigger
  double pending_baseline_ = 0;         // the baseline when it triggered
  std::uint64_t settle_until_ = 0;      // no triggers before this index (filters refilling)
  std::uint64_t quiet_from_ = 0;        // delayed samples before this index are not baseline
  std::uint64_t dead_until_ = 0;        // end of the last dead interval (may lie ahead)
  std::uint64_t dead_total_ = 0;        // dead samples, including any ahead of next_index_
  std::uint64_t next_index_ = 0;
  bool started_ = false;
  McaCounts counts_;
  std::vector<McaEvent> events_;        // max_events, preallocated
  std::size_t event_count_ = 0;
  std::uint64_t events_dropped_ = 0;
};

}  // namespace weir::dsp

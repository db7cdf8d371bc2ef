#include "weir/dsp/mca.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "weir/dsp/detail/number_text.hpp"

namespace weir::dsp {

core::Result<Mca> Mca::create(const McaConfig& config) {
  const auto refuse = [](const std::string& why) { return core::fail(core::Errc::invalid_argument, why); };
  if (!std::isfinite(config.rate_hz) || config.rate_hz <= 0)
    return refuse("input rate = " + detail::num(config.rate_hz) + " Hz: must be positive");
  if (!std::isfinite(config.threshold) || config.threshold <= 0)
    return refuse("threshold = " + detail::num(config.threshold) + ": must be finite and > 0");
  if (config.bins < kMinBins || config.bins > kMaxBins)
    return refuse("bins = " + std::to_string(config.bins) + ": allowed " + std::to_string(kMinBins) + " to " +
                  std::to_string(kMaxBins));
  if (!std::isfinite(config.range) || config.range <= 0)
    return refuse("range = " + detail::num(config.range) + ": must be finite and > 0");
  if (!std::isfinite(config.gain) || config.gain <= 0)
    return refuse("gain = " + detail::num(config.gain) + ": must be finite and > 0");
  if (config.baseline > kMaxBaselineSamples)
    return refuse("baseline = " + std::to_string(config.baseline) + " samples: allowed 0 to " +
                  std::to_string(kMaxBaselineSamples));
  auto slow = Trapezoid::create(config.rise, config.flat, config.tau);
  if (!slow) return refuse("slow filter: " + slow.error().what);
  auto fast = Trapezoid::create(config.fast_rise, config.fast_flat, config.tau);
  if (!fast) return refuse("fast filter: " + fast.error().what);
  if (config.fast_rise > config.rise)
    return refuse("fast rise = " + std::to_string(config.fast_rise) + " samples: must not exceed the rise of " +
                  std::to_string(config.rise) + " samples (the fast filter detects, the slow one measures)");
  return Mca(config, std::move(*slow), std::move(*fast));
}

Mca::Mca(const McaConfig& config, Trapezoid slow, Trapezoid fast)
    : config_(config),
      slow_(std::move(slow)),
      fast_(std::move(fast)),
      rearm_level_(config.threshold / 2),
      bins_per_unit_(config.bins / config.range),
      spectrum_(config.bins),
      delay_(std::size_t{fast_.length()} + kRiseMargin),
      baseline_ring_(config.baseline),
      events_(config.max_events) {
  // The trigger lags a pulse's first sample by at most the fast filter's length plus the pulse's
  // own rise; the slow trapezoid then lasts slow_.length() from that first sample.
  pileup_window_ = slow_.length() + static_cast<std::uint32_t>(delay_.size());
}

void Mca::restart(std::uint64_t index) noexcept {
  if (pending_) {
    ++counts_.discarded;
    add_event(pending_index_, std::numeric_limits<double>::quiet_NaN(), kMcaCut);
    pending_ = false;
  }
  if (dead_until_ > next_index_) dead_total_ -= dead_until_ - next_index_;  // never lived through
  dead_until_ = index;
  slow_.reset();
  fast_.reset();
  std::fill(delay_.begin(), delay_.end(), 0.0);
  delay_at_ = 0;
  need_offset_ = true;
  armed_ = false;
  // The first sample becomes the zero: whatever tail of an earlier pulse it carries looks like a
  // step to the filters, so nothing counts until they have shaped it out.
  settle_until_ = index + pileup_window_;
  quiet_from_ = settle_until_;
  add_dead(index, settle_until_);
}

void Mca::reset() noexcept {
  if (pending_) add_event(pending_index_, std::numeric_limits<double>::quiet_NaN(), kMcaCut);  // cut by the gap
  pending_ = false;
  started_ = false;
  counts_ = McaCounts{};
  dead_total_ = 0;
  dead_until_ = 0;
  std::fill(spectrum_.begin(), spectrum_.end(), 0U);
  baseline_at_ = 0;
  baseline_count_ = 0;
  baseline_sum_ = 0;
}

void Mca::add_dead(std::uint64_t from, std::uint64_t to) noexcept {
  from = std::max(from, dead_until_);  // intervals arrive in order: only the part not yet counted
  if (to <= from) return;
  dead_total_ += to - from;
  dead_until_ = to;
}

void Mca::on_trigger(std::uint64_t index) noexcept {
  const std::uint64_t window = pileup_window_;
  if (config_.pileup_reject) {
    // Dead: t - L + 1 .. t + L - 2, i.e. 2 (L - 1) samples, exactly as many as the neighbours an
    // accepted pulse must find empty (t - L + 1 .. t + L - 1 without t), so that a sample is live
    // with the probability that a pulse there is accepted: accepted / live is the unbiased rate.
    add_dead(index + 1 >= window ? index + 1 - window : 0, index + window - 1);
    const bool piled = pending_;  // the previous trigger is less than L ago
    if (pending_) {
      pending_piled_ = true;
      finalize();
    }
    pending_piled_ = piled;
  } else {
    if (pending_) {  // busy measuring: this pulse rides on the current one
      ++counts_.piled_up;
      add_event(index, std::numeric_limits<double>::quiet_NaN(), kMcaPileup);
      return;
    }
    add_dead(index + 1, index + window);  // non-paralysable: the L - 1 samples after a measured pulse
    pending_piled_ = false;
  }
  pending_ = true;
  pending_index_ = index;
  pending_end_ = index + window;
  peak_ = -std::numeric_limits<double>::infinity();
  pending_baseline_ = baseline_value();
}

void Mca::add_event(std::uint64_t index, double height, std::uint32_t flags) noexcept {
  if (events_.empty()) return;
  if (event_count_ == events_.size()) {
    ++events_dropped_;
    return;
  }
  events_[event_count_++] = McaEvent{index, height, flags};
}

void Mca::finalize() noexcept {
  pending_ = false;
  const double height = (peak_ - pending_baseline_) * config_.gain;
  if (pending_piled_) {
    ++counts_.piled_up;
    add_event(pending_index_, height, kMcaPileup);
    return;
  }
  ++counts_.accepted;
  if (!(height >= 0) || height >= config_.range) {
    ++counts_.out_of_range;
    ++(height >= config_.range ? counts_.overflow : counts_.underflow);
    add_event(pending_index_, height, kMcaOutOfRange);
    return;
  }
  add_event(pending_index_, height, 0);
  const auto bin = std::min(static_cast<std::uint32_t>(height * bins_per_unit_), config_.bins - 1);
  if (spectrum_[bin] != std::numeric_limits<std::uint32_t>::max()) ++spectrum_[bin];
}

void Mca::push_baseline(double value) noexcept {
  const std::uint32_t capacity = static_cast<std::uint32_t>(baseline_ring_.size());
  if (baseline_count_ == capacity) baseline_sum_ -= baseline_ring_[baseline_at_];
  else ++baseline_count_;
  baseline_ring_[baseline_at_] = value;
  baseline_sum_ += value;
  if (++baseline_at_ == capacity) {
    baseline_at_ = 0;
    double sum = 0;  // re-sum once per lap, so the running sum's rounding stays bounded
    for (std::uint32_t i = 0; i < baseline_count_; ++i) sum += baseline_ring_[i];
    baseline_sum_ = sum;
  }
}

void Mca::process(std::span<const double> x, std::uint64_t first_index) noexcept {
  if (!started_ || first_index != next_index_) {
    if (started_) ++counts_.gaps;
    next_index_ = first_index;
    restart(first_index);
    started_ = true;
  }
  const double threshold = config_.threshold;
  const std::uint64_t delay = delay_.size();
  const bool restore = !baseline_ring_.empty();
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::uint64_t index = first_index + i;
    if (need_offset_) {
      offset_ = x[i];
      need_offset_ = false;
    }
    const double v = x[i] - offset_;
    const double slow = slow_.step(v);
    const double fast = fast_.step(v);

    if (armed_ && fast >= threshold) {
      armed_ = false;
      quiet_from_ = std::max(quiet_from_, index + pileup_window_);  // every pulse, counted or not
      if (index >= settle_until_) on_trigger(index);
    } else if (!armed_ && fast < rearm_level_) {
      armed_ = true;  // hysteresis: noise on a pulse's falling edge must not trigger it twice
    }

    if (pending_) {
      peak_ = std::max(peak_, slow);
      if (index + 1 == pending_end_) finalize();
    }

    // The restorer sees the slow output `delay` samples late, so by the time a pulse has
    // triggered, none of its leading edge has gone into the average.
    const double late = delay_[delay_at_];
    delay_[delay_at_] = slow;
    if (++delay_at_ == delay) delay_at_ = 0;
    if (restore && index >= quiet_from_ + delay) push_baseline(late);
  }
  next_index_ = first_index + x.size();
  counts_.real_samples += x.size();
}

McaCounts Mca::counts() const noexcept {
  McaCounts out = counts_;
  out.dead_samples = dead_total_ - (dead_until_ > next_index_ ? dead_until_ - next_index_ : 0);
  return out;
}

double Mca::real_s() const noexcept { return static_cast<double>(counts_.real_samples) / config_.rate_hz; }

double Mca::dead_s() const noexcept { return static_cast<double>(counts().dead_samples) / config_.rate_hz; }

}  // namespace weir::dsp

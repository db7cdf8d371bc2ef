// Frames are assembled in frame_ and slid by the hop after each transform; the window is applied
// while copying into FFTW's aligned input, so frame_ keeps the raw samples overlap needs.
#include "weir/dsp/spectrum_estimator.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "weir/dsp/sample_convert.hpp"
#include "weir/dsp/spectral_limits.hpp"

#include "weir/dsp/detail/number_text.hpp"

namespace weir::dsp {

using detail::num;

namespace {

tl::unexpected<core::Error> refuse(const std::string& why) {
  return core::fail(core::Errc::invalid_argument, "spectrum: " + why);
}

}  // namespace

core::Result<Averaging> parse_averaging(std::string_view text) {
  if (text == "none") return Averaging::none;
  if (text == "linear") return Averaging::linear;
  if (text == "exponential") return Averaging::exponential;
  return core::fail(core::Errc::invalid_argument,
                    "unknown averaging '" + std::string(text) + "': use none, linear or exponential");
}

core::Result<SpectrumOutput> parse_spectrum_output(std::string_view text) {
  if (text == "amplitude") return SpectrumOutput::amplitude;
  if (text == "power") return SpectrumOutput::power;
  if (text == "psd") return SpectrumOutput::psd;
  return core::fail(core::Errc::invalid_argument,
                    "unknown spectrum output '" + std::string(text) + "': use amplitude, power or psd");
}

const char* spectrum_output_name(SpectrumOutput output) noexcept {
  switch (output) {
    case SpectrumOutput::amplitude: return "amplitude";
    case SpectrumOutput::power: return "power";
    case SpectrumOutput::psd: return "psd";
  }
  return "unknown";
}

core::Result<SpectrumEstimator> SpectrumEstimator::create(const SpectrumConfig& config) {
  if (config.size < 2) return refuse("size " + std::to_string(config.size) + " is too small; use at least 2");
  if (!is_allocation_free_size(config.size))
    return refuse("size " + std::to_string(config.size) + " has the prime factor " +
                  std::to_string(largest_prime_factor(config.size)) +
                  ", which makes FFTW allocate on every transform; use a size whose prime factors are all <= " +
                  std::to_string(kMaxFftPrimeFactor) + ", e.g. " +
                  std::to_string(next_allocation_free_size(config.size)));
  if (!std::isfinite(config.sample_rate_hz) || config.sample_rate_hz <= 0)
    return refuse("sample rate must be positive, not " + num(config.sample_rate_hz));
  if (!(config.overlap >= 0 && config.overlap <= kMaxOverlap))
    return refuse("overlap " + num(config.overlap) + " is out of range; use 0 .. " + num(kMaxOverlap));
  if (config.averaging == Averaging::linear && (config.averages < 1 || config.averages > kMaxAverages))
    return refuse("averages " + std::to_string(config.averages) + " is out of range; use 1 .. " +
                  std::to_string(kMaxAverages));
  if (config.averaging == Averaging::exponential && !(config.alpha > 0 && config.alpha <= 1))
    return refuse("alpha " + num(config.alpha) + " is out of range; use (0, 1]");
  if (config.window.kind == WindowKind::kaiser && !(config.window.kaiser_beta >= 0))
    return refuse("kaiser beta " + num(config.window.kaiser_beta) + " must be >= 0");
  auto fft = RealFft::create(config.size, config.effort, config.wisdom);
  if (!fft) return tl::make_unexpected(core::with_context(fft.error(), "spectrum"));
  return SpectrumEstimator(config, std::move(*fft));
}

SpectrumEstimator::SpectrumEstimator(const SpectrumConfig& config, RealFft fft)
    : config_(config),
      fft_(std::move(fft)),
      window_(make_window(config.window, config.size, WindowSymmetry::periodic)),
      frame_(config.size),
      tail_(config.size),
      average_(config.size / 2 + 1),
      out_(config.size / 2 + 1),
      gains_(window_gains(window_)) {
  const auto n = static_cast<double>(config.size);
  const auto overlap_samples = static_cast<std::size_t>(std::lround(config.overlap * n));
  hop_ = std::max<std::size_t>(1, config.size - std::min<std::size_t>(overlap_samples, config.size));
  const double scaled_gain = n * gains_.coherent_gain;
  power_scale_ = 2 / (scaled_gain * scaled_gain);
  if (config.output == SpectrumOutput::psd) density_ = n / (gains_.enbw_bins * config.sample_rate_hz);
  if (config.averaging == Averaging::none) config_.averages = 1;
  dropped_.resize(hop_);
}

std::uint64_t SpectrumEstimator::span_samples() const noexcept {
  const std::uint64_t n = config_.size;
  return config_.averaging == Averaging::linear ? (config_.averages - 1ULL) * hop_ + n : n;
}

double SpectrumEstimator::bin_hz(std::size_t k) const noexcept {
  return static_cast<double>(k) * config_.sample_rate_hz / static_cast<double>(config_.size);
}

double SpectrumEstimator::spectra_per_second() const noexcept {
  const double frames_per_second = config_.sample_rate_hz / static_cast<double>(hop_);
  return config_.averaging == Averaging::linear ? frames_per_second / config_.averages : frames_per_second;
}

void SpectrumEstimator::reset() noexcept {
  fill_ = 0;
  in_average_ = 0;
  fed_ = 0;
  frame_start_ = 0;
  window_first_ = 0;
  window_end_ = 0;
  since_reset_ = 0;
  std::fill(average_.begin(), average_.end(), 0.0);
}

void SpectrumEstimator::emit(Sink sink, void* context, bool partial) noexcept {
  const SpectrumSpan span{window_first_, window_end_,
                          config_.averaging == Averaging::exponential ? 1U : in_average_, partial};
  scale_output();
  sink(context, out_, span);
  ++spectra_;
}

std::uint32_t SpectrumEstimator::feed(core::Dtype dtype, const void* block, std::size_t count, Sink sink,
                                      void* context) noexcept {
  const std::size_t n = frame_.size();
  const std::size_t keep = n - hop_;  // the overlap: the next frame's first samples
  const std::uint64_t base = fed_;
  std::uint32_t emitted = 0;
  std::size_t done = 0;
  while (done < count) {
    if (fill_ == 0 && dtype == core::Dtype::f32 && count - done >= n) {
      // A whole frame lies in the block: window it straight from there, no staging copy.
      const float* src = static_cast<const float*>(block) + done;
      const std::uint64_t start = base + done;
      if (transform_frame(src, start)) {
        emit(sink, context, false);
        ++emitted;
      }
      std::memcpy(dropped_.data(), src, hop_ * sizeof(float));
      std::memcpy(frame_.data(), src + hop_, keep * sizeof(float));
      frame_start_ = start + hop_;
      fill_ = keep;
      done += n;
      continue;
    }
    if (fill_ == 0) frame_start_ = base + done;
    const std::size_t take = std::min(count - done, n - fill_);
    to_float(dtype, block, done, std::span<float>(frame_.data() + fill_, take));
    fill_ += take;
    done += take;
    if (fill_ < n) break;
    if (transform_frame(frame_.data(), frame_start_)) {
      emit(sink, context, false);
      ++emitted;
    }
    std::memcpy(dropped_.data(), frame_.data(), hop_ * sizeof(float));
    std::memmove(frame_.data(), frame_.data() + hop_, keep * sizeof(float));
    frame_start_ += hop_;
    fill_ = keep;
  }
  fed_ = base + count;
  return emitted;
}

std::uint32_t SpectrumEstimator::flush_partial(Sink sink, void* context) noexcept {
  const std::size_t n = frame_.size();
  const std::size_t keep = n - hop_;
  std::uint32_t emitted = 0;
  if (since_reset_ == 0) {
    dropped_samples_ += fill_;  // fewer than N samples since the reset: no frame to make
  } else {
    // After a frame fill_ >= keep; samples beyond the overlap are in no frame yet.
    const bool tail = fill_ > keep;
    if (tail) {  // the last N samples: the end of the dropped hop, then what is buffered
      const std::size_t before = n - fill_;  // < hop
      std::memcpy(tail_.data(), dropped_.data() + (hop_ - before), before * sizeof(float));
      std::memcpy(tail_.data() + before, frame_.data(), fill_ * sizeof(float));
      (void)transform_frame(tail_.data(), frame_start_ - before);
    }
    if (config_.averaging == Averaging::exponential ? tail : in_average_ > 0) {
      emit(sink, context, true);
      emitted = 1;
    }
  }
  reset();
  return emitted;
}

bool SpectrumEstimator::transform_frame(const float* frame, std::uint64_t start) noexcept {
  if (config_.averaging != Averaging::linear || in_average_ == 0) window_first_ = start;
  window_end_ = start + frame_.size();
  if (since_reset_ < ~0U) ++since_reset_;
  const std::span<float> in = fft_.input();
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = frame[i] * window_[i];
  fft_.execute();
  const std::span<const std::complex<float>> spectrum = fft_.output();
  ++frames_;
  const bool exponential = config_.averaging == Averaging::exponential;
  in_average_ = exponential ? std::min<std::uint32_t>(in_average_ + 1, 2) : in_average_ + 1;  // 2: running
  if (exponential && in_average_ > 1) {
    for (std::size_t k = 0; k < spectrum.size(); ++k)
      average_[k] += config_.alpha * (static_cast<double>(std::norm(spectrum[k])) - average_[k]);
    return true;
  }
  if (in_average_ == 1) {  // first frame of a linear sum, or the start of an exponential average
    for (std::size_t k = 0; k < spectrum.size(); ++k) average_[k] = std::norm(spectrum[k]);
  } else {
    for (std::size_t k = 0; k < spectrum.size(); ++k) average_[k] += std::norm(spectrum[k]);
  }
  return exponential || in_average_ >= config_.averages;
}

void SpectrumEstimator::scale_output() noexcept {
  const std::size_t bins = out_.size();
  const bool linear = config_.averaging != Averaging::exponential;
  const double mean = linear ? 1.0 / in_average_ : 1.0;
  if (linear) in_average_ = 0;
  const bool has_nyquist = config_.size % 2 == 0;
  if (!config_.db && config_.output != SpectrumOutput::amplitude && bins > 2) {
    // Power and PSD: one factor for every bin but the unmirrored ends, a loop that vectorises.
    const double factor = mean * power_scale_ * (config_.output == SpectrumOutput::psd ? density_ : 1.0);
    const std::size_t last = has_nyquist ? bins - 1 : bins;
    for (std::size_t k = 1; k < last; ++k) out_[k] = static_cast<float>(average_[k] * factor);
    out_[0] = static_cast<float>(average_[0] * factor / 2);
    if (has_nyquist) out_[bins - 1] = static_cast<float>(average_[bins - 1] * factor / 2);
    return;
  }
  for (std::size_t k = 0; k < bins; ++k) {
    const bool single = k == 0 || (has_nyquist && k == bins - 1);  // no mirror image to fold in
    const double power = average_[k] * mean * (single ? power_scale_ / 2 : power_scale_);
    double value = 0;
    switch (config_.output) {
      case SpectrumOutput::amplitude: value = std::sqrt(single ? power : 2 * power); break;
      case SpectrumOutput::power: value = power; break;
      case SpectrumOutput::psd: value = power * density_; break;
    }
    if (config_.db) {  // amplitude in dB is 10 log10 of its square: one floor for every output
      const double power_like = config_.output == SpectrumOutput::amplitude ? value * value : value;
      value = 10 * std::log10(std::max(power_like, static_cast<double>(kDbFloor)));
    }
    out_[k] = static_cast<float>(value);
  }
}

}  // namespace weir::dsp

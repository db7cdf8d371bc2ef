#pragma once
// Streaming one-sided spectrum estimation: blocks of any size are cut into frames of N samples
// (overlapping by a fraction of N), windowed, transformed by FFTW r2c, averaged, and scaled.
//
// Scaling, for N/2+1 bins at k * fs / N (cg: coherent gain, enbw: bins; see README.md):
//   power[k]     = c_k * <|X_k|^2> / (N cg)^2,  c_k = 2 except DC (and Nyquist for even N): 1
//                  a sine of peak amplitude A on a bin reads A^2 / 2; a DC level d reads d^2
//   amplitude[k] = sqrt(c_k * power[k])         the sine reads A, DC reads d
//   psd[k]       = power[k] / (enbw * fs / N)   white noise of variance s^2 reads 2 s^2 / fs
//   dB           = 10 log10(power or psd), 20 log10(amplitude); power (or amplitude squared) below
//                  kDbFloor reads as 10 log10(kDbFloor) = -300 dB, never -inf
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "weir/core/arena_layout.hpp"
#include "weir/core/error.hpp"
#include "weir/dsp/real_fft.hpp"
#include "weir/dsp/window.hpp"

namespace weir::dsp {

/// none: every frame is a spectrum. linear: the mean of `averages` frames, emitted every that many
/// frames. exponential: avg += alpha * (frame - avg) (the first frame starts it), emitted every frame.
enum class Averaging : std::uint8_t { none, linear, exponential };
enum class SpectrumOutput : std::uint8_t { amplitude, power, psd };

/// "linear" -> Averaging::linear; fails naming the text and the choices. Thread: any.
[[nodiscard]] core::Result<Averaging> parse_averaging(std::string_view text);
/// "psd" -> SpectrumOutput::psd; fails naming the text and the choices. Thread: any.
[[nodiscard]] core::Result<SpectrumOutput> parse_spectrum_output(std::string_view text);
[[nodiscard]] const char* spectrum_output_name(SpectrumOutput output) noexcept;

struct SpectrumConfig {
  std::uint32_t size = 1024;       // N, samples per frame; any N >= 2 (FFTW is fastest for 2^a 3^b 5^c 7^d)
  double sample_rate_hz = 0;       // of the input samples
  WindowSpec window{};
  double overlap = 0;              // 0 .. kMaxOverlap of N; hop = N - round(overlap * N), at least 1
  Averaging averaging = Averaging::none;
  std::uint32_t averages = 1;      // linear: frames per spectrum
  double alpha = 0.1;              // exponential: weight of the newest frame, (0, 1]
  SpectrumOutput output = SpectrumOutput::power;
  bool db = false;
  PlanEffort effort = PlanEffort::measure;
  WisdomOptions wisdom{};          // on by default, at default_wisdom_path()
};

/// Which input a spectrum summarises, in samples fed since the estimator was created or last reset:
/// [first, end). linear: first frame start .. last frame end; none and exponential: the newest
/// frame (an exponential average's memory of older frames precedes it). partial: made by flush().
struct SpectrumSpan {
  std::uint64_t first = 0;
  std::uint64_t end = 0;
  std::uint32_t frames = 0;  // frames in it (linear); 1 otherwise
  bool partial = false;
};

class SpectrumEstimator {
 public:
  /// Validates, makes the window, plans the FFT and allocates everything process() uses. Fails
  /// naming the field, its value and the allowed range. Thread: control only.
  [[nodiscard]] static core::Result<SpectrumEstimator> create(const SpectrumConfig& config);

  /// Feeds `samples`; calls on_spectrum(std::span<const float>) -- or on_spectrum(span,
  /// const SpectrumSpan&) -- with the N/2+1 bins of every spectrum they finish (the span is valid
  /// only during the call). Returns how many it emitted.
  /// Hot path: no allocation, no lock. Thread: one DSP thread.
  template <class OnSpectrum>
  std::uint32_t process(std::span<const float> samples, OnSpectrum&& on_spectrum) noexcept {
    return process(core::Dtype::f32, samples.data(), samples.size(), std::forward<OnSpectrum>(on_spectrum));
  }

  /// The same for `count` samples of `dtype` at `block` (raw bytes in place, e.g. an arena slot).
  /// Requires: is_real_dtype(dtype). Hot path.
  template <class OnSpectrum>
  std::uint32_t process(core::Dtype dtype, const void* block, std::size_t count, OnSpectrum&& on_spectrum) noexcept {
    using F = std::remove_reference_t<OnSpectrum>;
    return feed(dtype, block, count, &invoke<F>, const_cast<void*>(static_cast<const void*>(&on_spectrum)));
  }

  /// Emits what the input fed since the last spectrum holds, as one spectrum marked partial, then
  /// reset()s: the frames of an unfinished linear average, and, when samples arrived after the
  /// last frame, a final frame of the last N samples (overlapping the previous frame more than the
  /// hop), so the spectrum's span ends at the last sample fed. Fewer than N samples since the reset
  /// make no frame: they are counted in dropped_samples(). Returns 1 when it emitted. Hot path.
  template <class OnSpectrum>
  std::uint32_t flush(OnSpectrum&& on_spectrum) noexcept {
    using F = std::remove_reference_t<OnSpectrum>;
    return flush_partial(&invoke<F>, const_cast<void*>(static_cast<const void*>(&on_spectrum)));
  }

  /// Forgets buffered samples and the running average; sample offsets start again at 0.
  /// Thread: the DSP thread.
  void reset() noexcept;

  [[nodiscard]] std::size_t bins() const noexcept { return out_.size(); }
  [[nodiscard]] std::size_t hop() const noexcept { return hop_; }
  [[nodiscard]] double bin_hz(std::size_t k) const noexcept;
  /// Spectra emitted per second of input: fs / hop, divided by `averages` for linear averaging.
  [[nodiscard]] double spectra_per_second() const noexcept;
  [[nodiscard]] const WindowGains& gains() const noexcept { return gains_; }
  [[nodiscard]] const SpectrumConfig& config() const noexcept { return config_; }
  [[nodiscard]] const WisdomReport& wisdom() const noexcept { return fft_.wisdom(); }
  [[nodiscard]] std::uint64_t frames() const noexcept { return frames_; }    // transformed so far
  [[nodiscard]] std::uint64_t spectra() const noexcept { return spectra_; }  // emitted so far
  /// Samples fed since the last reset.
  [[nodiscard]] std::uint64_t fed() const noexcept { return fed_; }
  /// Samples that were in no spectrum: fewer than N between a reset and the next flush.
  [[nodiscard]] std::uint64_t dropped_samples() const noexcept { return dropped_samples_; }
  /// Input samples one full spectrum spans: N, or (averages - 1) * hop + N for linear averaging.
  [[nodiscard]] std::uint64_t span_samples() const noexcept;

 private:
  using Sink = void (*)(void* context, std::span<const float> spectrum, const SpectrumSpan& span) noexcept;

  template <class F>
  static void invoke(void* context, std::span<const float> spectrum, const SpectrumSpan& span) noexcept {
    if constexpr (std::is_invocable_v<F&, std::span<const float>, const SpectrumSpan&>)
      (*static_cast<F*>(context))(spectrum, span);
    else
      (*static_cast<F*>(context))(spectrum);
  }

  SpectrumEstimator(const SpectrumConfig& config, RealFft fft);
  std::uint32_t feed(core::Dtype dtype, const void* block, std::size_t count, Sink sink, void* context) noexcept;
  std::uint32_t flush_partial(Sink sink, void* context) noexcept;
  // N samples starting at offset `start`; true when a spectrum is due.
  bool transform_frame(const float* frame, std::uint64_t start) noexcept;
  void scale_output() noexcept;
  void emit(Sink sink, void* context, bool partial) noexcept;

  SpectrumConfig config_;
  RealFft fft_;
  std::vector<float> window_;
  std::vector<float> frame_;    // N samples; frame_[0, fill_) are buffered, the first at frame_start_
  std::vector<float> dropped_;  // the hop samples the last slide dropped (before frame_start_)
  std::vector<float> tail_;     // N: flush()'s last frame
  std::vector<double> average_; // N/2+1 mean |X_k|^2 (linear: the running sum)
  std::vector<float> out_;      // N/2+1, the spectrum handed to the sink
  WindowGains gains_;
  std::size_t hop_ = 0;
  std::size_t fill_ = 0;
  std::uint32_t in_average_ = 0;  // frames in average_ since the last emit (linear), or ever (exponential)
  double power_scale_ = 0;        // 2 / (N cg)^2 for interior bins
  double density_ = 1;            // psd: 1 / (enbw * fs / N); otherwise 1
  std::uint64_t frames_ = 0;
  std::uint64_t spectra_ = 0;
  std::uint64_t fed_ = 0;             // samples fed since the last reset
  std::uint64_t frame_start_ = 0;     // offset of frame_[0]
  std::uint64_t window_first_ = 0;    // offset of the first sample of the spectrum being built
  std::uint64_t window_end_ = 0;      // one past the last sample of its newest frame
  std::uint32_t since_reset_ = 0;     // frames transformed since the last reset (saturating)
  std::uint64_t dropped_samples_ = 0;
};

}  // namespace weir::dsp

#pragma once
// Test signals a physicist recognises, generated block by block with no allocation after create():
// sine, square, linear chirp, gaussian noise, and detector pulses (Poisson arrivals, fast rise,
// exponential decay, pulse heights from a line-plus-continuum spectrum, baseline noise).
//
// Reproducibility: every random draw comes from generators seeded with SignalConfig::seed and
// turned into numbers by this module's own code, not by the standard library's distributions, whose
// output differs between library implementations: gaussian noise (the noise signal and the pulses'
// baseline) from detail::GaussianBatch (vectorised xoshiro256+ and Box-Muller in float), everything
// else from one std::mt19937_64 (53-bit uniforms, Box-Muller normals in double). The
// same seed and configuration therefore give bit-identical samples for a given build and libm, in
// any block size: the n-th sample does not depend on how the stream was cut into blocks.
#include <cstdint>
#include <random>
#include <span>
#include <string_view>
#include <vector>

#include "weir/core/arena_layout.hpp"
#include "weir/core/error.hpp"
#include "weir/acq/detail/gaussian_batch.hpp"

namespace weir::acq {

enum class SignalKind : std::uint8_t { sine, square, chirp, noise, pulses };

/// "sine" -> SignalKind::sine; fails naming the text and the choices for an unknown signal.
/// Thread: any.
[[nodiscard]] core::Result<SignalKind> parse_signal(std::string_view text);
/// SignalKind::sine -> "sine". Thread: any.
[[nodiscard]] const char* signal_name(SignalKind kind) noexcept;

/// One line of a pulse-height spectrum: pulses of this height (in units of SignalConfig::amplitude)
/// with this relative intensity.
struct SpectrumLine {
  double height = 0;
  double weight = 0;
};

inline constexpr double kDefaultCountRateHz = 1000;      // pulses per second, on average (Poisson)
inline constexpr double kDefaultPulseRiseS = 0.5e-6;     // rise time constant of a pulse
inline constexpr double kDefaultPulseDecayS = 50e-6;     // decay time constant (tau) of a pulse
inline constexpr double kDefaultLineSigma = 0.005;       // relative gaussian width of each line (0.5 %)
inline constexpr double kDefaultContinuumWeight = 0.3;   // continuum intensity beside the lines' total of 1
inline constexpr double kDefaultBaselineNoise = 0.002;   // baseline noise sigma, in units of the amplitude
inline constexpr double kDefaultChirpSweepS = 1.0;       // a chirp sweeps from start to end this long, then repeats

/// Cs-137-like (662 keV) and Co-60-like (1173 and 1332 keV) lines, as heights in MeV-like units.
inline const std::vector<SpectrumLine>& default_spectrum_lines() {
  static const std::vector<SpectrumLine> lines{{0.662, 0.4}, {1.173, 0.3}, {1.332, 0.3}};
  return lines;
}

/// The detector-pulse model. Pulse shape: A * h * norm * (exp(-t/decay) - exp(-t/rise)), normalised
/// so that its peak is exactly A * h; arrivals are a Poisson process at count_rate_hz with sub-sample
/// arrival times; h is drawn from `lines` (each widened by line_sigma, relative) or, with weight
/// continuum_weight, uniformly from (0, continuum_max] (0: the highest line). Overlapping pulses add
/// up (pile-up), as they do in a real preamplifier.
struct PulseConfig {
  double count_rate_hz = kDefaultCountRateHz;
  double rise_s = kDefaultPulseRiseS;    // sampled heights are true to within ~1 % for rise >= ~0.5 sample
  double decay_s = kDefaultPulseDecayS;  // must exceed rise_s
  std::vector<SpectrumLine> lines = default_spectrum_lines();
  double line_sigma = kDefaultLineSigma;
  double continuum_weight = kDefaultContinuumWeight;
  double continuum_max = 0;
  double baseline_noise = kDefaultBaselineNoise;  // gaussian sigma, in units of the amplitude
};

/// What to generate. Sample n is the signal at time t = n / sample_rate_hz.
struct SignalConfig {
  SignalKind kind = SignalKind::sine;
  double sample_rate_hz = 0;
  double amplitude = 1.0;     // peak (sine, square, chirp), sigma (noise), height scale (pulses)
  double offset = 0;          // added to every sample
  double frequency_hz = 1000; // sine and square; a chirp's start frequency
  double chirp_end_hz = 0;    // a chirp's end frequency (0: a tenth of the sample rate)
  double chirp_sweep_s = kDefaultChirpSweepS;
  std::uint64_t seed = 0;     // noise and pulses; see the file comment
  PulseConfig pulses;
};

/// Saturation count of one conversion to an integer dtype.
struct FillResult {
  std::uint64_t saturated = 0;  // samples clipped to the dtype's smallest or largest value
};

/// A pure signal source: no I/O, no clocks, no shared state. configure once with create(), then
/// call fill() once per block. Thread: one thread at a time.
class SignalGenerator {
 public:
  /// Validates the configuration and preallocates a scratch of `block_samples` floats (used by
  /// skip()). Fails naming the bad field: a rate that is not positive, a frequency above Nyquist,
  /// a non-finite amplitude, a pulse rise not shorter than its decay, a decay shorter than two
  /// samples, an empty spectrum.
  [[nodiscard]] static core::Result<SignalGenerator> create(const SignalConfig& config, std::uint32_t block_samples);

  /// Writes the next out.size() samples. Hot path: no allocation.
  void fill(std::span<float> out) noexcept;
  void fill(std::span<double> out) noexcept;

  /// Writes the next `count` samples into `out` as `dtype`, in place (zero copy into an arena
  /// block). Float dtypes take the value as is. Integer dtypes are ADC codes: +-full_scale maps to
  /// the whole code range (signed: code = round(v / full_scale * 2^(bits-1)); unsigned: offset
  /// binary, 0 V at mid-scale), and values beyond it saturate at the end codes instead of wrapping.
  /// Requires: out.size() >= count * dtype size; dtype is not c64; full_scale > 0. Hot path.
  FillResult fill(core::Dtype dtype, std::span<std::byte> out, std::uint32_t count, double full_scale) noexcept;

  /// Advances the stream by `count` samples without writing them anywhere the caller sees, so a
  /// block dropped at the source leaves every later sample where it would have been. Hot path.
  void skip(std::uint64_t count) noexcept;

  /// Samples generated (or skipped) so far: the index of the next sample.
  [[nodiscard]] std::uint64_t position() const noexcept { return position_; }
  /// Pulses that have arrived so far (pulses signal only).
  [[nodiscard]] std::uint64_t pulse_count() const noexcept { return pulse_count_; }
  [[nodiscard]] const SignalConfig& config() const noexcept { return config_; }

 private:
  explicit SignalGenerator(const SignalConfig& config, std::uint32_t block_samples);
  template <class Sink>
  void generate(std::size_t count, Sink&& sink) noexcept;
  double uniform() noexcept;       // (0, 1]
  double normal() noexcept;        // N(0, 1)
  double pulse_height() noexcept;  // in units of the amplitude
  double next_interval() noexcept; // samples until the next pulse

  SignalConfig config_;
  std::mt19937_64 rng_;
  detail::GaussianBatch noise_;  // the noise signal and the pulses' baseline noise
  std::vector<float> scratch_;  // one block, for skip()
  std::uint64_t position_ = 0;
  double cycles_ = 0;           // sine, square, chirp: phase in cycles, in [0, 1)
  double step_cycles_ = 0;      // sine, square: cycles per sample
  double chirp_t_ = 0;          // chirp: samples since the sweep started
  double chirp_sweep_samples_ = 0;
  double chirp_f0_ = 0, chirp_slope_ = 0;  // cycles per sample, and its change per sample
  double spare_normal_ = 0;     // Box-Muller makes normals in pairs
  bool has_spare_ = false;
  double to_next_pulse_ = 0;    // pulses: samples until the next arrival
  double samples_per_pulse_ = 0;
  double decay_per_sample_ = 0, rise_per_sample_ = 0;  // exp(-1/tau) per sample
  double decay_samples_ = 0, rise_samples_ = 0;        // tau in samples
  double peak_norm_ = 0;        // makes a pulse's peak equal its height
  double decay_state_ = 0, rise_state_ = 0;            // the sum of all pulses' two exponentials
  double total_weight_ = 0;
  double continuum_max_ = 0;
  std::uint64_t pulse_count_ = 0;
};

}  // namespace weir::acq

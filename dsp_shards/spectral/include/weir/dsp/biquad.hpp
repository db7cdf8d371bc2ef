#pragma once
// Second-order IIR sections from R. Bristow-Johnson's Audio EQ Cookbook, run in transposed direct
// form II with double-precision state, cascadable, state kept across blocks.
#include <complex>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "weir/core/error.hpp"

namespace weir::dsp {

/// bandpass is the cookbook's constant 0 dB peak gain form: |H(f0)| = 1. lowpass and highpass
/// have |H(f0)| = Q (-3 dB at Q = 1/sqrt(2)); notch has |H(f0)| = 0.
enum class BiquadType : std::uint8_t { lowpass, highpass, bandpass, notch };

/// y = b0 x + b1 x[n-1] + b2 x[n-2] - a1 y[n-1] - a2 y[n-2] (a0 divided out).
struct BiquadCoeffs {
  double b0 = 1, b1 = 0, b2 = 0, a1 = 0, a2 = 0;
};

/// The cookbook section for f0 (Hz) and Q at sample rate fs. Fails naming the value and the range:
/// f0 not in (0, fs/2), Q not positive and finite. Thread: any.
[[nodiscard]] core::Result<BiquadCoeffs> design_biquad(BiquadType type, double f0_hz, double q, double sample_rate_hz);

/// H(e^{j 2 pi f / fs}) of one section: the design's exact response. Thread: any.
[[nodiscard]] std::complex<double> biquad_response(const BiquadCoeffs& c, double f_hz, double sample_rate_hz) noexcept;

class BiquadCascade {
 public:
  /// Runs the sections in order. Fails on none, more than kMaxBiquadSections, or non-finite
  /// coefficients. Thread: control only.
  [[nodiscard]] static core::Result<BiquadCascade> create(std::vector<BiquadCoeffs> sections);

  /// Filters in.size() samples into out; in place is allowed. Requires: out.size() >= in.size().
  /// Hot path: no allocation. Thread: one DSP thread.
  void process(std::span<const float> in, std::span<float> out) noexcept;
  void reset() noexcept;
  [[nodiscard]] std::span<const BiquadCoeffs> sections() const noexcept { return sections_; }

 private:
  struct State {
    double s1 = 0, s2 = 0;
  };
  explicit BiquadCascade(std::vector<BiquadCoeffs> sections)
      : sections_(std::move(sections)), state_(sections_.size()) {}

  std::vector<BiquadCoeffs> sections_;
  std::vector<State> state_;
};

}  // namespace weir::dsp

#pragma once
// Integer decimation: a low-pass FIR evaluated only at every M-th input sample (the other M-1
// outputs would be thrown away, so they are never computed). Output m is the filtered signal at
// input sample m * M, counted from the first sample the decimator saw; output rate fs / M.
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "weir/core/error.hpp"
#include "weir/dsp/detail/polyphase_fir.hpp"
#include "weir/dsp/window.hpp"

namespace weir::dsp {

class Decimator {
 public:
  /// Decimates by `factor` with the given anti-alias taps (a low-pass below input_rate / (2 factor)
  /// is the caller's responsibility). Fails naming the factor (1 .. kMaxDecimation), an empty tap
  /// set or a bad rate. Thread: control only.
  [[nodiscard]] static core::Result<Decimator> create(std::uint32_t factor, std::vector<float> taps,
                                                      double input_rate_hz);

  /// Designs its own anti-alias low-pass: cutoff kDecimateCutoffFraction of the new Nyquist,
  /// kDecimateTapsPerFactor * factor + 1 taps, the given window (hamming: > 50 dB rejection of
  /// everything that would alias into the lower 0.6 of the new band). Thread: control only.
  [[nodiscard]] static core::Result<Decimator> create_antialias(std::uint32_t factor, double input_rate_hz,
                                                                const WindowSpec& window = {WindowKind::hamming});

  /// Consumes in.size() samples, writes the outputs they complete to out and returns how many.
  /// Requires: out.size() >= outputs_for(in.size()). In place is allowed. Hot path: no allocation.
  /// Thread: one DSP thread.
  std::size_t process(std::span<const float> in, std::span<float> out) noexcept;

  /// Outputs the next `inputs` samples will produce, exactly. Thread: the DSP thread.
  [[nodiscard]] std::size_t outputs_for(std::size_t inputs) const noexcept {
    return inputs < until_output_ ? 0 : 1 + (inputs - until_output_) / factor_;
  }
  /// Inputs still to come before the next output (1 .. factor).
  [[nodiscard]] std::size_t inputs_until_output() const noexcept { return until_output_; }
  void reset() noexcept;

  [[nodiscard]] std::uint32_t factor() const noexcept { return factor_; }
  [[nodiscard]] double input_rate_hz() const noexcept { return input_rate_hz_; }
  [[nodiscard]] double output_rate_hz() const noexcept { return input_rate_hz_ / factor_; }
  [[nodiscard]] std::span<const float> taps() const noexcept { return taps_; }

 private:
  Decimator(std::uint32_t factor, std::vector<float> taps, double input_rate_hz)
      : taps_(std::move(taps)), kernel_(taps_, factor), factor_(factor), input_rate_hz_(input_rate_hz) {}

  std::vector<float> taps_;
  detail::PolyphaseFir kernel_;  // polyphase: each phase's sub-filter over its deinterleaved inputs
  std::uint32_t factor_;
  double input_rate_hz_;
  std::size_t until_output_ = 1;  // the very first sample makes output 0
};

}  // namespace weir::dsp

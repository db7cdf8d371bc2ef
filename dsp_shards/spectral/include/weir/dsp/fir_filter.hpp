#pragma once
// A streaming FIR filter: y[n] = sum h[j] x[n-j], its history kept across blocks, so cutting the
// input into blocks of any size gives bit-identical output. Many outputs are computed at once in
// vector lanes (detail/polyphase_fir.hpp).
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "weir/core/error.hpp"
#include "weir/dsp/detail/polyphase_fir.hpp"

namespace weir::dsp {

class FirFilter {
 public:
  /// Takes the taps (e.g. from design_fir). Fails on an empty set or non-finite taps.
  /// Thread: control only.
  [[nodiscard]] static core::Result<FirFilter> create(std::vector<float> taps);

  /// Filters in.size() samples into out. In place (in.data() == out.data()) is allowed.
  /// Requires: out.size() >= in.size(). Hot path: no allocation. Thread: one DSP thread.
  void process(std::span<const float> in, std::span<float> out) noexcept;
  /// One sample in, one out: the same output process() makes for it. Hot path.
  float step(float x) noexcept;
  /// Zeroes the history, as if the filter had only ever seen zeros.
  void reset() noexcept { kernel_.clear(); }

  [[nodiscard]] std::span<const float> taps() const noexcept { return taps_; }
  /// Delay of a linear-phase (symmetric) design: (taps - 1) / 2 samples.
  [[nodiscard]] double group_delay_samples() const noexcept {
    return static_cast<double>(taps_.size() - 1) / 2;
  }

 private:
  explicit FirFilter(std::vector<float> taps) : taps_(std::move(taps)), kernel_(taps_, 1) {}

  std::vector<float> taps_;
  detail::PolyphaseFir kernel_;
};

}  // namespace weir::dsp

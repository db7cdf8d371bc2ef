#pragma once
// One-pole DC blocker: H(z) = g (1 - z^-1) / (1 - r z^-1), r = exp(-2 pi fc / fs),
// g = (1 + r) / 2 so the gain is exactly 0 at DC and 1 at Nyquist; -3 dB near fc for fc << fs.
#include <span>

#include "weir/core/error.hpp"

namespace weir::dsp {

class DcBlocker {
 public:
  /// Fails naming the corner and the range: corner not in (0, fs/2). Thread: control only.
  [[nodiscard]] static core::Result<DcBlocker> create(double corner_hz, double sample_rate_hz);

  /// Filters in.size() samples into out; in place is allowed; state kept across blocks.
  /// Requires: out.size() >= in.size(). Hot path. Thread: one DSP thread.
  void process(std::span<const float> in, std::span<float> out) noexcept;
  void reset() noexcept {
    x1_ = 0;
    y1_ = 0;
  }
  [[nodiscard]] double pole() const noexcept { return r_; }

 private:
  explicit DcBlocker(double r) : r_(r), gain_((1 + r) / 2) {}

  double r_;
  double gain_;
  double x1_ = 0;  // previous input
  double y1_ = 0;  // previous output
};

}  // namespace weir::dsp

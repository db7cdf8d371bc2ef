#include "weir/dsp/dc_blocker.hpp"

#include <cmath>
#include <numbers>
#include <string>

#include "weir/dsp/detail/number_text.hpp"

namespace weir::dsp {

using detail::num;

namespace {

constexpr double kDcFlushBelow = 1e-200;  // keeps a silent input from decaying into denormals

}  // namespace

core::Result<DcBlocker> DcBlocker::create(double corner_hz, double sample_rate_hz) {
  if (!std::isfinite(sample_rate_hz) || sample_rate_hz <= 0)
    return core::fail(core::Errc::invalid_argument,
                      "dc blocker: sample rate must be positive, not " + num(sample_rate_hz));
  if (!(corner_hz > 0 && corner_hz < sample_rate_hz / 2))
    return core::fail(core::Errc::invalid_argument, "dc blocker: corner " + num(corner_hz) +
                                                        " Hz is out of range; use (0, " + num(sample_rate_hz / 2) +
                                                        ") Hz, below Nyquist");
  return DcBlocker(std::exp(-2 * std::numbers::pi * corner_hz / sample_rate_hz));
}

void DcBlocker::process(std::span<const float> in, std::span<float> out) noexcept {
  double x1 = x1_;
  double y1 = y1_;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const double x = in[i];
    const double y = gain_ * (x - x1) + r_ * y1;
    x1 = x;
    y1 = y;
    out[i] = static_cast<float>(y);
  }
  x1_ = x1;
  y1_ = std::abs(y1) < kDcFlushBelow ? 0 : y1;
}

}  // namespace weir::dsp

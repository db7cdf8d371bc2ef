// Each section runs over the whole block before the next one (a tight loop over one state pair).
// State below kFlushBelow is zeroed once per block: a silent input would otherwise decay into
// denormals, which cost a hundred times more per operation on x86.
#include "weir/dsp/biquad.hpp"

#include <cmath>
#include <numbers>
#include <string>

#include "weir/dsp/spectral_limits.hpp"

#include "weir/dsp/detail/number_text.hpp"

namespace weir::dsp {

using detail::num;

namespace {

constexpr double kFlushBelow = 1e-200;  // far above the denormal range, far below any signal

bool finite(const BiquadCoeffs& c) noexcept {
  return std::isfinite(c.b0) && std::isfinite(c.b1) && std::isfinite(c.b2) && std::isfinite(c.a1) &&
         std::isfinite(c.a2);
}

}  // namespace

core::Result<BiquadCoeffs> design_biquad(BiquadType type, double f0_hz, double q, double sample_rate_hz) {
  if (!std::isfinite(sample_rate_hz) || sample_rate_hz <= 0)
    return core::fail(core::Errc::invalid_argument, "biquad: sample rate must be positive, not " + num(sample_rate_hz));
  const double nyquist = sample_rate_hz / 2;
  if (!(f0_hz > 0 && f0_hz < nyquist))
    return core::fail(core::Errc::invalid_argument, "biquad: f0 " + num(f0_hz) + " Hz is out of range; use (0, " +
                                                        num(nyquist) + ") Hz, below Nyquist");
  if (!(q > 0) || !std::isfinite(q))
    return core::fail(core::Errc::invalid_argument, "biquad: Q " + num(q) + " must be positive and finite");
  const double w0 = 2 * std::numbers::pi * f0_hz / sample_rate_hz;
  const double cosw = std::cos(w0);
  const double alpha = std::sin(w0) / (2 * q);
  const double a0 = 1 + alpha;
  double b0 = 0, b1 = 0, b2 = 0;
  switch (type) {
    case BiquadType::lowpass:
      b0 = (1 - cosw) / 2;
      b1 = 1 - cosw;
      b2 = b0;
      break;
    case BiquadType::highpass:
      b0 = (1 + cosw) / 2;
      b1 = -(1 + cosw);
      b2 = b0;
      break;
    case BiquadType::bandpass:
      b0 = alpha;
      b1 = 0;
      b2 = -alpha;
      break;
    case BiquadType::notch:
      b0 = 1;
      b1 = -2 * cosw;
      b2 = 1;
      break;
  }
  return BiquadCoeffs{b0 / a0, b1 / a0, b2 / a0, -2 * cosw / a0, (1 - alpha) / a0};
}

std::complex<double> biquad_response(const BiquadCoeffs& c, double f_hz, double sample_rate_hz) noexcept {
  const std::complex<double> z1 = std::polar(1.0, -2 * std::numbers::pi * f_hz / sample_rate_hz);  // z^-1
  const std::complex<double> z2 = z1 * z1;
  return (c.b0 + c.b1 * z1 + c.b2 * z2) / (1.0 + c.a1 * z1 + c.a2 * z2);
}

core::Result<BiquadCascade> BiquadCascade::create(std::vector<BiquadCoeffs> sections) {
  if (sections.empty() || sections.size() > kMaxBiquadSections)
    return core::fail(core::Errc::invalid_argument, "biquad cascade: " + std::to_string(sections.size()) +
                                                        " sections; use 1 .. " + std::to_string(kMaxBiquadSections));
  for (std::size_t i = 0; i < sections.size(); ++i)
    if (!finite(sections[i]))
      return core::fail(core::Errc::invalid_argument,
                        "biquad cascade: section " + std::to_string(i) + " has a non-finite coefficient");
  return BiquadCascade(std::move(sections));
}

void BiquadCascade::process(std::span<const float> in, std::span<float> out) noexcept {
  const float* src = in.data();
  for (std::size_t s = 0; s < sections_.size(); ++s) {
    const BiquadCoeffs c = sections_[s];
    State st = state_[s];
    for (std::size_t i = 0; i < in.size(); ++i) {
      const double x = src[i];
      const double y = c.b0 * x + st.s1;
      st.s1 = c.b1 * x - c.a1 * y + st.s2;
      st.s2 = c.b2 * x - c.a2 * y;
      out[i] = static_cast<float>(y);
    }
    if (std::abs(st.s1) < kFlushBelow) st.s1 = 0;
    if (std::abs(st.s2) < kFlushBelow) st.s2 = 0;
    state_[s] = st;
    src = out.data();  // later sections run in place on the output
  }
}

void BiquadCascade::reset() noexcept {
  for (State& st : state_) st = State{};
}

}  // namespace weir::dsp

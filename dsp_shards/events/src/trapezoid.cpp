#include "weir/dsp/trapezoid.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "weir/dsp/detail/number_text.hpp"

namespace weir::dsp {

core::Result<Trapezoid> Trapezoid::create(std::uint32_t rise_samples, std::uint32_t flat_samples,
                                          double tau_samples) {
  const auto refuse = [](const std::string& why) { return core::fail(core::Errc::invalid_argument, why); };
  if (rise_samples == 0 || rise_samples > kMaxShapingSamples)
    return refuse("rise = " + std::to_string(rise_samples) + " samples: allowed 1 to " +
                  std::to_string(kMaxShapingSamples));
  if (flat_samples > kMaxShapingSamples)
    return refuse("flat top = " + std::to_string(flat_samples) + " samples: allowed 0 to " +
                  std::to_string(kMaxShapingSamples));
  if (!std::isfinite(tau_samples) || tau_samples < 0)
    return refuse("tau = " + detail::num(tau_samples) + " samples: must be finite and >= 0 (0: no pole-zero)");
  return Trapezoid(rise_samples, flat_samples, tau_samples);
}

Trapezoid::Trapezoid(std::uint32_t rise_samples, std::uint32_t flat_samples, double tau_samples)
    : rise_(rise_samples),
      length_l_(rise_samples + flat_samples),
      v_ring_(rise_samples),
      w_ring_(std::size_t{rise_samples} + flat_samples) {
  const double k = rise_samples;
  if (tau_samples > 0) {
    // expm1 keeps M accurate for long decays, where exp(1/tau) - 1 would lose its digits.
    const double m = 1.0 / std::expm1(1.0 / tau_samples);
    sum_gain_ = 1.0 / (k * (m + 1.0));
    difference_gain_ = m / (m + 1.0) / k;
  } else {
    sum_gain_ = 0;  // for a step, p alone is the trapezoid; U would add a plateau
    difference_gain_ = 1.0 / k;
  }
}

void Trapezoid::reset() noexcept {
  std::fill(v_ring_.begin(), v_ring_.end(), 0.0);
  std::fill(w_ring_.begin(), w_ring_.end(), 0.0);
  v_at_ = w_at_ = 0;
  sum_v_ = sum_w_ = 0;
}

double Trapezoid::resum(const std::vector<double>& ring) noexcept {
  double sum = 0;
  for (const double v : ring) sum += v;
  return sum;
}

}  // namespace weir::dsp

#pragma once
// Simulated detector pulses of four shape classes, as dsp_shards/embed/model/train_encoder.py makes
// them for training (change both together): fast exponential, slow exponential, Gaussian, pile-up of
// two fast pulses; amplitude 1 to 10, arrival at sample 64 +- 8, Gaussian baseline noise of 0.1.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace weir::test {

inline constexpr std::uint32_t kPulseLength = 256;
inline constexpr int kPulseClasses = 4;

/// One window of class cls (0 fast_exp, 1 slow_exp, 2 gaussian, 3 pileup).
inline std::vector<float> simulate_pulse(int cls, std::mt19937_64& rng) {
  constexpr double kPre = 64, kJitter = 8, kNoise = 0.1;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::normal_distribution<double> noise(0.0, kNoise);
  const auto u = [&](double lo, double hi) { return lo + (hi - lo) * unit(rng); };
  const double amp = u(1.0, 10.0);
  const double t0 = kPre + std::floor(u(-kJitter, kJitter + 1));
  const double rise = cls == 1 ? u(2.0, 4.0) : u(1.0, 2.0);
  const double tau = cls == 1 ? u(30.0, 60.0) : u(4.0, 10.0);
  const double sigma = u(4.0, 10.0), gap = u(20.0, 80.0), frac = u(0.5, 1.0);
  const auto expo = [&](double dt) { return dt < 0 ? 0.0 : std::exp(-dt / tau) - std::exp(-dt / rise); };
  std::vector<double> shape(kPulseLength);
  for (std::uint32_t i = 0; i < kPulseLength; ++i) {
    const double dt = i - t0;
    switch (cls) {
      case 2: shape[i] = std::exp(-0.5 * (dt / sigma) * (dt / sigma)); break;
      case 3: shape[i] = expo(dt) + frac * expo(dt - gap); break;
      default: shape[i] = expo(dt); break;
    }
  }
  double peak = 1e-6;
  for (const double s : shape) peak = std::max(peak, std::abs(s));
  std::vector<float> window(kPulseLength);
  for (std::uint32_t i = 0; i < kPulseLength; ++i) window[i] = static_cast<float>(amp * shape[i] / peak + noise(rng));
  return window;
}

}  // namespace weir::test

#pragma once
// Signals from the simulator's generator, and a lock-in measurement of one tone's amplitude,
// shared by the spectral family's tests.
#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <numbers>
#include <span>
#include <vector>

#include "weir/acq/signal_generator.hpp"
#include "weir/dsp/spectrum_estimator.hpp"

namespace weir::test {

inline constexpr std::uint32_t kGeneratorBlock = 4096;  // the generator fills this many samples per call

/// n samples of a simulator signal, generated block by block as a driver would.
inline std::vector<float> generate(const acq::SignalConfig& config, std::size_t n) {
  auto generator = acq::SignalGenerator::create(config, kGeneratorBlock);
  REQUIRE(generator);
  std::vector<float> out(n);
  for (std::size_t at = 0; at < n; at += kGeneratorBlock)
    generator->fill(std::span<float>(out).subspan(at, std::min<std::size_t>(kGeneratorBlock, n - at)));
  return out;
}

inline std::vector<float> sine(double rate_hz, double frequency_hz, double amplitude, std::size_t n) {
  acq::SignalConfig config;
  config.kind = acq::SignalKind::sine;
  config.sample_rate_hz = rate_hz;
  config.frequency_hz = frequency_hz;
  config.amplitude = amplitude;
  return generate(config, n);
}

inline std::vector<float> noise(double rate_hz, double sigma, std::size_t n, std::uint64_t seed) {
  acq::SignalConfig config;
  config.kind = acq::SignalKind::noise;
  config.sample_rate_hz = rate_hz;
  config.amplitude = sigma;
  config.seed = seed;
  return generate(config, n);
}

/// Peak amplitude of the component at f in x, by projection on cos and sin. Exact (no leakage)
/// when x spans a whole number of cycles of f and of every other tone in it.
inline double tone_amplitude(std::span<const float> x, double frequency_hz, double rate_hz) {
  double c = 0;
  double s = 0;
  const double step = 2 * std::numbers::pi * frequency_hz / rate_hz;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double phase = step * static_cast<double>(i);
    c += x[i] * std::cos(phase);
    s += x[i] * std::sin(phase);
  }
  return 2 * std::hypot(c, s) / static_cast<double>(x.size());
}

inline double to_db(double ratio) { return 20 * std::log10(ratio); }

/// A spectrum configuration that leaves the user's wisdom cache alone.
inline dsp::SpectrumConfig spectrum_config(std::uint32_t size, double rate_hz) {
  dsp::SpectrumConfig config;
  config.size = size;
  config.sample_rate_hz = rate_hz;
  config.wisdom.use = false;
  config.effort = dsp::PlanEffort::estimate;
  return config;
}

/// Every spectrum an estimator emits, in order.
inline std::vector<std::vector<float>> run_spectra(dsp::SpectrumEstimator& estimator, std::span<const float> x,
                                                   std::size_t block) {
  std::vector<std::vector<float>> spectra;
  for (std::size_t at = 0; at < x.size(); at += block)
    estimator.process(x.subspan(at, std::min(block, x.size() - at)),
                      [&](std::span<const float> s) { spectra.emplace_back(s.begin(), s.end()); });
  return spectra;
}

}  // namespace weir::test

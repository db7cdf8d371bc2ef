#pragma once
// Test data for the codecs: the simulator's detector pulses as i16 ADC codes (as the codec bench
// makes them), gaussian f32 noise, zeros and random bytes, and the codec names every test covers.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "weir/acq/signal_generator.hpp"

namespace weir::test {

inline const std::vector<std::string> kCodecNames = {
    "none", "deflate:1", "deflate:6", "shuffle+deflate:1", "lz4", "shuffle+lz4",
    "zstd:1", "zstd:3", "shuffle+zstd:1", "bitshuffle+lz4"};

/// `samples` i16 ADC codes of the simulator's pulses: +-10 V full scale, 20 k pulses/s at 1 MS/s,
/// the default baseline noise (a few LSB).
inline std::vector<std::byte> detector_codes(std::size_t samples, std::uint64_t seed = 1) {
  acq::SignalConfig signal;
  signal.kind = acq::SignalKind::pulses;
  signal.sample_rate_hz = 1e6;
  signal.pulses.count_rate_hz = 20'000;
  signal.seed = seed;
  auto generator = acq::SignalGenerator::create(signal, static_cast<std::uint32_t>(samples));
  REQUIRE(generator);
  std::vector<std::byte> out(samples * sizeof(std::int16_t));
  (void)generator->fill(core::Dtype::i16, out, static_cast<std::uint32_t>(samples), 10.0);
  return out;
}

inline std::vector<std::byte> f32_noise(std::size_t samples, std::uint64_t seed = 2) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0F, 1.0F);
  std::vector<std::byte> out(samples * sizeof(float));
  for (std::size_t i = 0; i < samples; ++i) {
    const float v = normal(rng);
    std::memcpy(out.data() + i * sizeof v, &v, sizeof v);
  }
  return out;
}

inline std::vector<std::byte> random_bytes(std::size_t bytes, std::uint64_t seed = 3) {
  std::mt19937_64 rng(seed);
  std::vector<std::byte> out(bytes);
  for (auto& b : out) b = static_cast<std::byte>(rng() & 0xFFU);
  return out;
}

}  // namespace weir::test

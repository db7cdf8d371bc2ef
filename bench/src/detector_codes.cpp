// Detector-like i16 ADC codes (detector_codes.hpp).
#include "detector_codes.hpp"

#include "weir/acq/signal_generator.hpp"

namespace weir::bench {

namespace {

constexpr double kFullScaleV = 10.0;     // +-10 V over the i16 range: 0.31 mV an LSB
constexpr double kRateHz = 1e6;
constexpr double kCountRateHz = 20'000;  // pulses a second: busy but mostly baseline

}  // namespace

std::vector<std::byte> detector_codes(std::uint64_t bytes) {
  acq::SignalConfig signal;
  signal.kind = acq::SignalKind::pulses;
  signal.sample_rate_hz = kRateHz;
  signal.pulses.count_rate_hz = kCountRateHz;
  const auto samples = static_cast<std::uint32_t>(bytes / sizeof(std::int16_t));
  auto generator = acq::SignalGenerator::create(signal, samples);
  if (!generator) return {};
  std::vector<std::byte> out(std::uint64_t{samples} * sizeof(std::int16_t));
  (void)generator->fill(core::Dtype::i16, out, samples, kFullScaleV);
  return out;
}

}  // namespace weir::bench

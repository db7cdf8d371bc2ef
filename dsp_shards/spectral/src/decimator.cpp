#include "weir/dsp/decimator.hpp"

#include <cmath>
#include <string>

#include "weir/dsp/fir_design.hpp"
#include "weir/dsp/spectral_limits.hpp"

namespace weir::dsp {

core::Result<Decimator> Decimator::create(std::uint32_t factor, std::vector<float> taps, double input_rate_hz) {
  if (factor < 1 || factor > kMaxDecimation)
    return core::fail(core::Errc::invalid_argument, "decimator: factor " + std::to_string(factor) +
                                                        " is out of range; use 1 .. " + std::to_string(kMaxDecimation));
  if (taps.empty()) return core::fail(core::Errc::invalid_argument, "decimator: no anti-alias taps");
  if (!std::isfinite(input_rate_hz) || input_rate_hz <= 0)
    return core::fail(core::Errc::invalid_argument, "decimator: input rate must be positive");
  return Decimator(factor, std::move(taps), input_rate_hz);
}

core::Result<Decimator> Decimator::create_antialias(std::uint32_t factor, double input_rate_hz,
                                                    const WindowSpec& window) {
  if (factor < 1 || factor > kMaxDecimation)
    return core::fail(core::Errc::invalid_argument, "decimator: factor " + std::to_string(factor) +
                                                        " is out of range; use 1 .. " + std::to_string(kMaxDecimation));
  if (factor == 1) return create(1, {1.0F}, input_rate_hz);
  FirSpec spec;
  spec.band = FirBand::lowpass;
  spec.sample_rate_hz = input_rate_hz;
  spec.cutoff_hz = kDecimateCutoffFraction * input_rate_hz / (2.0 * factor);
  spec.taps = kDecimateTapsPerFactor * factor + 1;
  spec.window = window;
  auto taps = design_fir(spec);
  if (!taps) return tl::make_unexpected(core::with_context(taps.error(), "decimator"));
  return create(factor, std::move(*taps), input_rate_hz);
}

std::size_t Decimator::process(std::span<const float> in, std::span<float> out) noexcept {
  return kernel_.process(in, out, until_output_);  // in place is safe: an output index never passes its input index
}

void Decimator::reset() noexcept {
  kernel_.clear();
  until_output_ = 1;
}

}  // namespace weir::dsp

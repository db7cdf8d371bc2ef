#include "weir/dsp/fir_filter.hpp"

#include <cmath>
#include <string>

namespace weir::dsp {

core::Result<FirFilter> FirFilter::create(std::vector<float> taps) {
  if (taps.empty()) return core::fail(core::Errc::invalid_argument, "fir filter: no taps");
  for (std::size_t i = 0; i < taps.size(); ++i)
    if (!std::isfinite(taps[i]))
      return core::fail(core::Errc::invalid_argument, "fir filter: tap " + std::to_string(i) + " is not finite");
  return FirFilter(std::move(taps));
}

void FirFilter::process(std::span<const float> in, std::span<float> out) noexcept {
  std::size_t every_input = 1;  // no decimation: an output at every input
  (void)kernel_.process(in, out, every_input);
}

float FirFilter::step(float x) noexcept {
  float y = 0;
  process(std::span<const float>(&x, 1), std::span<float>(&y, 1));
  return y;
}

}  // namespace weir::dsp

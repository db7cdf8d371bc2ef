#pragma once
// Windowed-sinc FIR design: the ideal (brick-wall) impulse response, truncated to `taps` around its
// centre and tapered by a symmetric window. Linear phase; group delay (taps - 1) / 2 samples.
#include <cstdint>
#include <string_view>
#include <vector>

#include "weir/core/error.hpp"
#include "weir/dsp/window.hpp"

namespace weir::dsp {

enum class FirBand : std::uint8_t { lowpass, highpass, bandpass, bandstop };

struct FirSpec {
  FirBand band = FirBand::lowpass;
  double sample_rate_hz = 0;
  double cutoff_hz = 0;       // low-/high-pass: the corner (-6 dB); band filters: the lower edge
  double cutoff_high_hz = 0;  // band filters: the upper edge
  std::uint32_t taps = 101;   // odd for highpass and bandstop (they need a centre tap)
  WindowSpec window{WindowKind::hamming};
};

/// The taps of `spec`, normalised to unity gain in the middle of the pass band: DC (lowpass,
/// bandstop), Nyquist (highpass), the band centre (bandpass). Attenuation far from the
/// transitions is set by the window: about 21 dB rectangular, 44 hann, 53 hamming, 74 blackman;
/// each transition is about 0.9, 3.1, 3.3, 5.5 * fs / taps wide. Fails naming the field, its value
/// and the allowed range: a cutoff not in (0, fs/2), a band whose low edge is not below its high
/// edge, taps outside kMinFirTaps..kMaxFirTaps, even taps for highpass or bandstop.
/// Thread: any. Cold path.
[[nodiscard]] core::Result<std::vector<float>> design_fir(const FirSpec& spec);

}  // namespace weir::dsp

// Ideal responses are built from low-pass sincs: highpass = delta - lowpass, bandpass = difference
// of two lowpasses, bandstop = delta - bandpass. Computed in double, stored as float.
#include "weir/dsp/fir_design.hpp"

#include <cmath>
#include <complex>
#include <numbers>
#include <string>

#include "weir/dsp/spectral_limits.hpp"

#include "weir/dsp/detail/number_text.hpp"

namespace weir::dsp {

using detail::num;

namespace {

tl::unexpected<core::Error> refuse(const std::string& why) {
  return core::fail(core::Errc::invalid_argument, "fir design: " + why);
}

// Ideal low-pass with cutoff fc (cycles per sample) at offset t from the centre.
double ideal_lowpass(double fc, double t) noexcept {
  if (t == 0) return 2 * fc;
  const double x = std::numbers::pi * t;
  return std::sin(2 * fc * x) / x;
}

// |H| of the taps at f (cycles per sample).
double gain_at(const std::vector<double>& h, double f) noexcept {
  std::complex<double> sum = 0;
  for (std::size_t i = 0; i < h.size(); ++i)
    sum += h[i] * std::polar(1.0, -2 * std::numbers::pi * f * static_cast<double>(i));
  return std::abs(sum);
}

bool is_band(FirBand band) noexcept { return band == FirBand::bandpass || band == FirBand::bandstop; }

const char* band_name(FirBand band) noexcept {
  switch (band) {
    case FirBand::lowpass: return "lowpass";
    case FirBand::highpass: return "highpass";
    case FirBand::bandpass: return "bandpass";
    case FirBand::bandstop: return "bandstop";
  }
  return "unknown";
}

}  // namespace

core::Result<std::vector<float>> design_fir(const FirSpec& spec) {
  const double fs = spec.sample_rate_hz;
  if (!std::isfinite(fs) || fs <= 0) return refuse("sample rate must be positive, not " + num(fs));
  const double nyquist = fs / 2;
  if (!(spec.cutoff_hz > 0 && spec.cutoff_hz < nyquist))
    return refuse(std::string(band_name(spec.band)) + " cutoff " + num(spec.cutoff_hz) +
                  " Hz is out of range; use (0, " + num(nyquist) + ") Hz, below Nyquist of " + num(fs) + " Hz");
  if (is_band(spec.band)) {
    if (!(spec.cutoff_high_hz > 0 && spec.cutoff_high_hz < nyquist))
      return refuse(std::string(band_name(spec.band)) + " upper cutoff " + num(spec.cutoff_high_hz) +
                    " Hz is out of range; use (0, " + num(nyquist) + ") Hz");
    if (!(spec.cutoff_hz < spec.cutoff_high_hz))
      return refuse(std::string(band_name(spec.band)) + " band " + num(spec.cutoff_hz) + " .. " +
                    num(spec.cutoff_high_hz) + " Hz: the low edge must be below the high edge");
  }
  if (spec.taps < kMinFirTaps || spec.taps > kMaxFirTaps)
    return refuse("taps " + std::to_string(spec.taps) + " is out of range; use " + std::to_string(kMinFirTaps) +
                  " .. " + std::to_string(kMaxFirTaps));
  const bool needs_centre = spec.band == FirBand::highpass || spec.band == FirBand::bandstop;
  if (needs_centre && spec.taps % 2 == 0)
    return refuse(std::string(band_name(spec.band)) + " needs an odd number of taps, not " +
                  std::to_string(spec.taps));
  if (spec.window.kind == WindowKind::kaiser && !(spec.window.kaiser_beta >= 0))
    return refuse("kaiser beta " + num(spec.window.kaiser_beta) + " must be >= 0");

  const double f1 = spec.cutoff_hz / fs;
  const double f2 = spec.cutoff_high_hz / fs;
  const std::vector<float> window = make_window(spec.window, spec.taps, WindowSymmetry::symmetric);
  const double centre = static_cast<double>(spec.taps - 1) / 2;
  std::vector<double> h(spec.taps);
  for (std::size_t i = 0; i < h.size(); ++i) {
    const double t = static_cast<double>(i) - centre;
    const double delta = t == 0 ? 1.0 : 0.0;
    double ideal = 0;
    switch (spec.band) {
      case FirBand::lowpass: ideal = ideal_lowpass(f1, t); break;
      case FirBand::highpass: ideal = delta - ideal_lowpass(f1, t); break;
      case FirBand::bandpass: ideal = ideal_lowpass(f2, t) - ideal_lowpass(f1, t); break;
      case FirBand::bandstop: ideal = delta - (ideal_lowpass(f2, t) - ideal_lowpass(f1, t)); break;
    }
    h[i] = ideal * window[i];
  }
  double reference = 0;  // the pass-band frequency normalised to unity gain
  switch (spec.band) {
    case FirBand::lowpass:
    case FirBand::bandstop: reference = 0; break;
    case FirBand::highpass: reference = 0.5; break;
    case FirBand::bandpass: reference = (f1 + f2) / 2; break;
  }
  const double gain = gain_at(h, reference);
  if (!(gain > 0))
    return refuse("the " + std::string(band_name(spec.band)) + " design has no gain in its pass band; use more taps");
  std::vector<float> taps(h.size());
  for (std::size_t i = 0; i < h.size(); ++i) taps[i] = static_cast<float>(h[i] / gain);
  return taps;
}

}  // namespace weir::dsp

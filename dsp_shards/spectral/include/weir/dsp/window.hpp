#pragma once
// Window functions for spectral analysis (periodic, "DFT-even") and FIR design (symmetric), with
// the two numbers that scale a windowed spectrum: coherent gain and equivalent noise bandwidth.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "weir/core/error.hpp"
#include "weir/dsp/spectral_limits.hpp"

namespace weir::dsp {

/// flattop is Heinzel's HFT95 (1, 1.9383379, 1.3045202, 0.4028270, 0.0350665): 0.0044 dB amplitude
/// flatness, -95 dB side lobes. blackman_harris is the 4-term -92 dB one. blackman is the classic
/// 3-term (0.42, 0.5, 0.08), used for FIR design.
enum class WindowKind : std::uint8_t { rectangular, hann, hamming, blackman, blackman_harris, flattop, kaiser };

/// periodic: w[n] over n / N, so an N-point DFT sees one exact period (spectral analysis).
/// symmetric: w[n] over n / (N - 1), w[0] == w[N-1] (linear-phase FIR design).
enum class WindowSymmetry : std::uint8_t { periodic, symmetric };

struct WindowSpec {
  WindowKind kind = WindowKind::hann;
  double kaiser_beta = kDefaultKaiserBeta;  // kaiser only
};

/// Coherent gain (mean of w: a sine's bin reads A * cg / 2 * N before correction) and equivalent
/// noise bandwidth in bins (N * sum w^2 / (sum w)^2).
struct WindowGains {
  double coherent_gain = 0;
  double enbw_bins = 0;
};

/// "hann" -> WindowKind::hann. Accepts rect, rectangular, hann, hamming, blackman, blackman-harris,
/// flattop, kaiser; fails naming the text and the choices. Thread: any.
[[nodiscard]] core::Result<WindowKind> parse_window(std::string_view text);

/// The canonical name: "blackman-harris". Thread: any.
[[nodiscard]] const char* window_name(WindowKind kind) noexcept;

/// Writes out.size() coefficients. Requires: kaiser_beta >= 0 for kaiser. Thread: any. No allocation.
void fill_window(const WindowSpec& spec, WindowSymmetry symmetry, std::span<float> out) noexcept;

/// The window of length n, as a new vector. Cold path. Thread: any.
[[nodiscard]] std::vector<float> make_window(const WindowSpec& spec, std::size_t n,
                                             WindowSymmetry symmetry = WindowSymmetry::periodic);

/// Coherent gain and ENBW of coefficients w. Requires: sum of w != 0. Thread: any.
[[nodiscard]] WindowGains window_gains(std::span<const float> w) noexcept;

}  // namespace weir::dsp

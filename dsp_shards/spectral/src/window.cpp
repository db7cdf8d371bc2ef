// Cosine-sum windows share one formula, w = a0 - a1 cos z + a2 cos 2z - a3 cos 3z + a4 cos 4z;
// Kaiser is the one exception.
#include "weir/dsp/window.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <string>

namespace weir::dsp {

namespace {

struct WindowName {
  WindowKind kind;
  const char* name;
};
constexpr WindowName kNames[] = {{WindowKind::rectangular, "rectangular"},
                                 {WindowKind::rectangular, "rect"},
                                 {WindowKind::hann, "hann"},
                                 {WindowKind::hamming, "hamming"},
                                 {WindowKind::blackman, "blackman"},
                                 {WindowKind::blackman_harris, "blackman-harris"},
                                 {WindowKind::flattop, "flattop"},
                                 {WindowKind::kaiser, "kaiser"}};

using CosineTerms = std::array<double, 5>;

CosineTerms cosine_terms(WindowKind kind) noexcept {
  switch (kind) {
    case WindowKind::rectangular: return {1, 0, 0, 0, 0};
    case WindowKind::hann: return {0.5, 0.5, 0, 0, 0};
    case WindowKind::hamming: return {0.54, 0.46, 0, 0, 0};
    case WindowKind::blackman: return {0.42, 0.5, 0.08, 0, 0};
    case WindowKind::blackman_harris: return {0.35875, 0.48829, 0.14128, 0.01168, 0};
    case WindowKind::flattop: return {1, 1.9383379, 1.3045202, 0.4028270, 0.0350665};  // HFT95
    case WindowKind::kaiser: break;
  }
  return {1, 0, 0, 0, 0};
}

}  // namespace

core::Result<WindowKind> parse_window(std::string_view text) {
  for (const auto& w : kNames)
    if (text == w.name) return w.kind;
  return core::fail(core::Errc::invalid_argument,
                    "unknown window '" + std::string(text) +
                        "': use rect (rectangular), hann, hamming, blackman, blackman-harris, flattop or kaiser");
}

const char* window_name(WindowKind kind) noexcept {
  for (const auto& w : kNames)
    if (w.kind == kind) return w.name;
  return "unknown";
}

void fill_window(const WindowSpec& spec, WindowSymmetry symmetry, std::span<float> out) noexcept {
  const std::size_t n = out.size();
  if (n == 0) return;
  const std::size_t period = symmetry == WindowSymmetry::periodic ? n : n - 1;
  if (period == 0) {  // a one-point symmetric window has nothing to taper
    out[0] = 1;
    return;
  }
  const double step = 1.0 / static_cast<double>(period);
  if (spec.kind == WindowKind::kaiser) {
    const double norm = std::cyl_bessel_i(0.0, spec.kaiser_beta);
    for (std::size_t i = 0; i < n; ++i) {
      const double r = 2 * static_cast<double>(i) * step - 1;  // -1 .. 1 across the period
      const double arg = spec.kaiser_beta * std::sqrt(std::max(0.0, 1 - r * r));
      out[i] = static_cast<float>(std::cyl_bessel_i(0.0, arg) / norm);
    }
    return;
  }
  const CosineTerms a = cosine_terms(spec.kind);
  for (std::size_t i = 0; i < n; ++i) {
    const double z = 2 * std::numbers::pi * static_cast<double>(i) * step;
    double w = a[0];
    double sign = -1;
    for (std::size_t k = 1; k < a.size(); ++k, sign = -sign) w += sign * a[k] * std::cos(static_cast<double>(k) * z);
    out[i] = static_cast<float>(w);
  }
}

std::vector<float> make_window(const WindowSpec& spec, std::size_t n, WindowSymmetry symmetry) {
  std::vector<float> w(n);
  fill_window(spec, symmetry, w);
  return w;
}

WindowGains window_gains(std::span<const float> w) noexcept {
  double sum = 0;
  double sum_sq = 0;
  for (const float v : w) {
    sum += v;
    sum_sq += static_cast<double>(v) * v;
  }
  const auto n = static_cast<double>(w.size());
  return {sum / n, n * sum_sq / (sum * sum)};
}

}  // namespace weir::dsp

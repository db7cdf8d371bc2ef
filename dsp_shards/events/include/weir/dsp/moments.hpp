#pragma once
// Summary statistics of a run of samples (count, mean, sum of squared deviations, min, max) that
// combine exactly: the aggregate of two runs is computed from their aggregates alone (Chan, Golub
// and LeVeque's pairwise update), so a sliding window never revisits samples and never subtracts
// large sums from each other.
#include <cstdint>
#include <limits>
#include <span>

namespace weir::dsp {

/// The aggregate of `count` samples. Default-constructed: the empty run, the identity of merge().
struct Moments {
  std::uint64_t count = 0;
  double mean = 0;
  double m2 = 0;  // sum of (x - mean)^2, >= 0
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();

  /// Population variance (divides by count); 0 for an empty run.
  [[nodiscard]] double variance() const noexcept { return count > 0 ? m2 / static_cast<double>(count) : 0.0; }
  /// Population standard deviation.
  [[nodiscard]] double stddev() const noexcept;
  /// Root mean square, sqrt(mean^2 + variance): no sum of squares, so no cancellation at large offsets.
  [[nodiscard]] double rms() const noexcept;
  /// max - min; 0 for an empty run.
  [[nodiscard]] double peak_to_peak() const noexcept { return count > 0 ? max - min : 0.0; }
};

/// The aggregate of the concatenation of the runs `a` and `b` (order does not matter).
/// Thread: any. Pure.
[[nodiscard]] Moments merge(const Moments& a, const Moments& b) noexcept;

/// The aggregate of `x`, by a shifted, corrected two-pass: deviations are taken from x[0] first,
/// so a large common offset costs no precision. Hot path: no allocation. Thread: any.
/// Vectorised (SSE2, AVX2 or AVX-512, picked at load time); min and max skip NaN samples after the
/// first, and a NaN first sample makes them NaN.
[[nodiscard]] Moments moments_of(std::span<const double> x) noexcept;

/// As above, straight from f32 samples (every sum in double, min and max exact): no conversion pass.
[[nodiscard]] Moments moments_of(std::span<const float> x) noexcept;

}  // namespace weir::dsp

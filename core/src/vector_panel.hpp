#pragma once
// The batched search's panel kernel and the bound that lets its scores stand in for the row kernel's.
// Private to core. Protocol and precision: docs/design/vectors.md ("Batched search").
#include <cstdint>

namespace weir::core::detail {

inline constexpr std::uint32_t kPanelQueries = 16;  // queries of one panel: one 16-lane register
inline constexpr std::uint32_t kPanelRows = 8;      // rows of one panel: eight accumulators in flight

/// Dot products of sixteen queries with eight rows: out[16 * r + j] = q_j . v[r] over n floats.
/// qt holds the queries transposed, qt[16 * i + j] = float i of query j, 64-byte aligned. Rows are read
/// in place, as for RowKernel (a writer may change them: the caller validates with the epoch); the rows
/// of next are prefetched meanwhile (a hint). The sums run in another order than the row kernels', so
/// results may differ from theirs in the last bits: see panel_slack().
using PanelKernel = void (*)(const float* qt, const float* const* v, const float* const* next, std::uint32_t n,
                             float* out) noexcept;

/// The AVX-512 panel; callers check kernel_table()'s dot_panel, which is nullptr where there is none.
void score_panel_avx512(const float* qt, const float* const* v, const float* const* next, std::uint32_t n,
                        float* out) noexcept;

/// How far apart two float32 evaluations of the same n-term dot product (or squared distance) can land,
/// relative to |q| |v| (to (|q| + |v|)^2 for the distance): each is within gamma(n + 2) of the exact
/// value whatever the order of the sums (Higham, Accuracy and Stability, 3.1), so twice that, doubled
/// again for margin, plus a few units of rounding for the conversions the ranks add on top.
[[nodiscard]] inline float panel_slack(std::uint32_t n) noexcept {
  constexpr double kUnit = 0x1p-24;  // unit roundoff of float32
  const double nu = (static_cast<double>(n) + 2.0) * kUnit;
  return static_cast<float>(4.0 * nu / (1.0 - nu) + 16.0 * kUnit);
}

}  // namespace weir::core::detail

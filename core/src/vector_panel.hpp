#pragma once
// The batched search's panel kernel and the bound that lets its scores stand in for the row kernel's.
// Private to core. Protocol and precision: docs/design/vectors.md ("Batched search").
#include <cstdint>

namespace weir::core::detail {

inline constexpr std::uint32_t kPanelQueries = 16;  // queries of one panel: one 16-lane register
inline constexpr std::uint32_t kPanelRows = 8;      // rows of one panel: eight accumulators in flight

/// The query terms of a panel's bound on the rank the row kernel can give a pair: for the dot product
/// d of query j and row r, bound = d * a[j] * row.a[r] + b[j] + c[j] * row.c[r] + row.d[r]. The pair
/// can enter query j's heap only if !(bound <= worst[j]) (a NaN bound can): worst[j] is the heap's
/// worst rank, or -inf while it is not full.
struct alignas(64) PanelBound {
  float a[kPanelQueries];
  float b[kPanelQueries];
  float c[kPanelQueries];
  float worst[kPanelQueries];
};
/// The row terms of the same bound.
struct PanelRowTerms {
  float a[kPanelRows];
  float c[kPanelRows];
  float d[kPanelRows];
};

/// Scores sixteen queries against eight rows, dot products over n floats, and sets bit j of wanted[r]
/// when the pair (j, r) can enter query j's heap by `bound`. qt holds the queries transposed,
/// qt[16 * i + j] = float i of query j, 64-byte aligned. Rows are read in place, as for RowKernel (a
/// writer may change them: the caller validates with the epoch); the rows of next are prefetched
/// meanwhile (a hint). The sums run in another order than the row kernels', so they may differ from
/// theirs in the last bits: the bound's slack (panel_slack()) covers that.
using PanelKernel = void (*)(const float* qt, const float* const* v, const float* const* next, std::uint32_t n,
                             const PanelBound& bound, const PanelRowTerms& row, std::uint16_t* wanted) noexcept;

/// The AVX-512 panel; callers check kernel_table()'s dot_panel, which is nullptr where there is none.
void score_panel_avx512(const float* qt, const float* const* v, const float* const* next, std::uint32_t n,
                        const PanelBound& bound, const PanelRowTerms& row, std::uint16_t* wanted) noexcept;

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

// The batched search's panel kernel: sixteen queries in one register, transposed, against eight rows read
// in place. One accumulator per row holds that row's sixteen dot products, so there are no horizontal sums
// and each row float, broadcast from memory, feeds one FMA; the queries (dim x 64 bytes) stay in cache.
#include "vector_panel.hpp"

#include <immintrin.h>

namespace weir::core::detail {

namespace {

constexpr std::uint32_t kFloatsPerLine = 16;  // floats per 64-byte cache line: one prefetch per row and line

template <std::uint32_t R>
__attribute__((target("avx512f"), always_inline)) inline void panel_step(const float* qt, const float* const* v,
                                                                        std::uint32_t i, __m512* acc) noexcept {
  const __m512 q = _mm512_load_ps(qt + std::size_t{kPanelQueries} * i);
#pragma GCC unroll 8
  for (std::uint32_t r = 0; r < R; ++r) acc[r] = _mm512_fmadd_ps(q, _mm512_set1_ps(v[r][i]), acc[r]);
}

}  // namespace

__attribute__((target("avx512f"))) void score_panel_avx512(const float* qt, const float* const* v,
                                                           const float* const* next, std::uint32_t n,
                                                           const PanelBound& bound, const PanelRowTerms& row,
                                                           std::uint16_t* wanted) noexcept {
  __m512 acc[kPanelRows];
#pragma GCC unroll 8
  for (auto& a : acc) a = _mm512_setzero_ps();
  std::uint32_t i = 0;
  for (; i + kFloatsPerLine <= n; i += kFloatsPerLine) {
#pragma GCC unroll 8
    for (std::uint32_t r = 0; r < kPanelRows; ++r) _mm_prefetch(reinterpret_cast<const char*>(next[r] + i), _MM_HINT_T0);
#pragma GCC unroll 16
    for (std::uint32_t k = 0; k < kFloatsPerLine; ++k) panel_step<kPanelRows>(qt, v, i + k, acc);
  }
  for (; i < n; ++i) panel_step<kPanelRows>(qt, v, i, acc);
  const __m512 a = _mm512_load_ps(bound.a);
  const __m512 b = _mm512_load_ps(bound.b);
  const __m512 c = _mm512_load_ps(bound.c);
  const __m512 worst = _mm512_load_ps(bound.worst);
#pragma GCC unroll 8
  for (std::uint32_t r = 0; r < kPanelRows; ++r) {
    __m512 t = _mm512_mul_ps(_mm512_mul_ps(acc[r], a), _mm512_set1_ps(row.a[r]));
    t = _mm512_add_ps(_mm512_add_ps(t, b), _mm512_add_ps(_mm512_mul_ps(c, _mm512_set1_ps(row.c[r])), _mm512_set1_ps(row.d[r])));
    wanted[r] = static_cast<std::uint16_t>(_mm512_cmp_ps_mask(t, worst, _CMP_NLE_UQ));  // NaN: wanted
  }
}

}  // namespace weir::core::detail

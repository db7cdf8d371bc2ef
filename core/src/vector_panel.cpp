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
                                                           float* out) noexcept {
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
#pragma GCC unroll 8
  for (std::uint32_t r = 0; r < kPanelRows; ++r) _mm512_storeu_ps(out + std::size_t{kPanelQueries} * r, acc[r]);
}

}  // namespace weir::core::detail

// Scoring kernels: dot product and squared L2 distance of a query against one row, in three code
// paths picked at run time. The row may be changing under a writer while it is read: like the copies in
// detail/seqlock.hpp these reads race by design, and the caller's epoch re-check discards the result;
// they need the same TSan suppression (race:weir::core::detail::score_).
// GCC 12's AVX-512 headers seed results with a self-initialised "undefined" vector, which its own
// -Wuninitialized then reports once inlined (GCC PR 105593); the warning belongs to the header.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <cstdint>

#include "cpu_features.hpp"
#include "vector_rows.hpp"

namespace weir::core::detail {

namespace {

constexpr std::uint32_t kPortableLanes = 8;  // independent accumulators: lets the compiler use SIMD
constexpr std::uint32_t kAvx2Lanes = 8;      // floats per __m256
constexpr std::uint32_t kAvx512Lanes = 16;   // floats per __m512
constexpr std::uint32_t kUnroll = 4;         // vector accumulators in flight, to hide FMA latency

}  // namespace

// ---- portable -------------------------------------------------------------------------------------

float score_dot_portable(const float* q, const float* v, std::uint32_t n) noexcept {
  float acc[kPortableLanes] = {};
  std::uint32_t i = 0;
  for (; i + kPortableLanes <= n; i += kPortableLanes)
    for (std::uint32_t j = 0; j < kPortableLanes; ++j) acc[j] += q[i + j] * v[i + j];
  for (std::uint32_t j = 0; i < n; ++i, ++j) acc[j] += q[i] * v[i];
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

float score_l2sq_portable(const float* q, const float* v, std::uint32_t n) noexcept {
  float acc[kPortableLanes] = {};
  std::uint32_t i = 0;
  for (; i + kPortableLanes <= n; i += kPortableLanes) {
    for (std::uint32_t j = 0; j < kPortableLanes; ++j) {
      const float d = q[i + j] - v[i + j];
      acc[j] += d * d;
    }
  }
  for (std::uint32_t j = 0; i < n; ++i, ++j) {
    const float d = q[i] - v[i];
    acc[j] += d * d;
  }
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

// ---- AVX2 + FMA -----------------------------------------------------------------------------------

namespace {

__attribute__((target("avx2,fma"))) inline float hsum256(__m256 x) noexcept {
  const __m128 lo = _mm256_castps256_ps128(x);
  const __m128 hi = _mm256_extractf128_ps(x, 1);
  __m128 s = _mm_add_ps(lo, hi);
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// Lanes [0, remaining) set: masked loads never touch the bytes past the row's last float.
__attribute__((target("avx2,fma"))) inline __m256i tail_mask256(std::uint32_t remaining) noexcept {
  const __m256i index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(remaining)), index);
}

}  // namespace

__attribute__((target("avx2,fma"))) float score_dot_avx2(const float* q, const float* v, std::uint32_t n) noexcept {
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
  std::uint32_t i = 0;
  for (; i + kUnroll * kAvx2Lanes <= n; i += kUnroll * kAvx2Lanes) {
    a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), _mm256_loadu_ps(v + i), a0);
    a1 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + kAvx2Lanes), _mm256_loadu_ps(v + i + kAvx2Lanes), a1);
    a2 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 2 * kAvx2Lanes), _mm256_loadu_ps(v + i + 2 * kAvx2Lanes), a2);
    a3 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 3 * kAvx2Lanes), _mm256_loadu_ps(v + i + 3 * kAvx2Lanes), a3);
  }
  for (; i + kAvx2Lanes <= n; i += kAvx2Lanes) a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), _mm256_loadu_ps(v + i), a0);
  if (i < n) {
    const __m256i m = tail_mask256(n - i);
    a1 = _mm256_fmadd_ps(_mm256_maskload_ps(q + i, m), _mm256_maskload_ps(v + i, m), a1);
  }
  return hsum256(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
}

__attribute__((target("avx2,fma"))) float score_l2sq_avx2(const float* q, const float* v, std::uint32_t n) noexcept {
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
  std::uint32_t i = 0;
  for (; i + kUnroll * kAvx2Lanes <= n; i += kUnroll * kAvx2Lanes) {
    const __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(q + i), _mm256_loadu_ps(v + i));
    const __m256 d1 = _mm256_sub_ps(_mm256_loadu_ps(q + i + kAvx2Lanes), _mm256_loadu_ps(v + i + kAvx2Lanes));
    const __m256 d2 = _mm256_sub_ps(_mm256_loadu_ps(q + i + 2 * kAvx2Lanes), _mm256_loadu_ps(v + i + 2 * kAvx2Lanes));
    const __m256 d3 = _mm256_sub_ps(_mm256_loadu_ps(q + i + 3 * kAvx2Lanes), _mm256_loadu_ps(v + i + 3 * kAvx2Lanes));
    a0 = _mm256_fmadd_ps(d0, d0, a0);
    a1 = _mm256_fmadd_ps(d1, d1, a1);
    a2 = _mm256_fmadd_ps(d2, d2, a2);
    a3 = _mm256_fmadd_ps(d3, d3, a3);
  }
  for (; i + kAvx2Lanes <= n; i += kAvx2Lanes) {
    const __m256 d = _mm256_sub_ps(_mm256_loadu_ps(q + i), _mm256_loadu_ps(v + i));
    a0 = _mm256_fmadd_ps(d, d, a0);
  }
  if (i < n) {
    const __m256i m = tail_mask256(n - i);
    const __m256 d = _mm256_sub_ps(_mm256_maskload_ps(q + i, m), _mm256_maskload_ps(v + i, m));
    a1 = _mm256_fmadd_ps(d, d, a1);
  }
  return hsum256(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
}

// ---- AVX-512 --------------------------------------------------------------------------------------

namespace {

__attribute__((target("avx512f"))) inline __mmask16 tail_mask512(std::uint32_t remaining) noexcept {
  return static_cast<__mmask16>((1U << remaining) - 1U);  // remaining < 16
}

}  // namespace

__attribute__((target("avx512f"))) float score_dot_avx512(const float* q, const float* v, std::uint32_t n) noexcept {
  __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
  std::uint32_t i = 0;
  for (; i + kUnroll * kAvx512Lanes <= n; i += kUnroll * kAvx512Lanes) {
    a0 = _mm512_fmadd_ps(_mm512_loadu_ps(q + i), _mm512_loadu_ps(v + i), a0);
    a1 = _mm512_fmadd_ps(_mm512_loadu_ps(q + i + kAvx512Lanes), _mm512_loadu_ps(v + i + kAvx512Lanes), a1);
    a2 = _mm512_fmadd_ps(_mm512_loadu_ps(q + i + 2 * kAvx512Lanes), _mm512_loadu_ps(v + i + 2 * kAvx512Lanes), a2);
    a3 = _mm512_fmadd_ps(_mm512_loadu_ps(q + i + 3 * kAvx512Lanes), _mm512_loadu_ps(v + i + 3 * kAvx512Lanes), a3);
  }
  for (; i + kAvx512Lanes <= n; i += kAvx512Lanes)
    a0 = _mm512_fmadd_ps(_mm512_loadu_ps(q + i), _mm512_loadu_ps(v + i), a0);
  if (i < n) {
    const __mmask16 m = tail_mask512(n - i);
    a1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, q + i), _mm512_maskz_loadu_ps(m, v + i), a1);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}

__attribute__((target("avx512f"))) float score_l2sq_avx512(const float* q, const float* v, std::uint32_t n) noexcept {
  __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
  std::uint32_t i = 0;
  for (; i + kUnroll * kAvx512Lanes <= n; i += kUnroll * kAvx512Lanes) {
    const __m512 d0 = _mm512_sub_ps(_mm512_loadu_ps(q + i), _mm512_loadu_ps(v + i));
    const __m512 d1 = _mm512_sub_ps(_mm512_loadu_ps(q + i + kAvx512Lanes), _mm512_loadu_ps(v + i + kAvx512Lanes));
    const __m512 d2 =
        _mm512_sub_ps(_mm512_loadu_ps(q + i + 2 * kAvx512Lanes), _mm512_loadu_ps(v + i + 2 * kAvx512Lanes));
    const __m512 d3 =
        _mm512_sub_ps(_mm512_loadu_ps(q + i + 3 * kAvx512Lanes), _mm512_loadu_ps(v + i + 3 * kAvx512Lanes));
    a0 = _mm512_fmadd_ps(d0, d0, a0);
    a1 = _mm512_fmadd_ps(d1, d1, a1);
    a2 = _mm512_fmadd_ps(d2, d2, a2);
    a3 = _mm512_fmadd_ps(d3, d3, a3);
  }
  for (; i + kAvx512Lanes <= n; i += kAvx512Lanes) {
    const __m512 d = _mm512_sub_ps(_mm512_loadu_ps(q + i), _mm512_loadu_ps(v + i));
    a0 = _mm512_fmadd_ps(d, d, a0);
  }
  if (i < n) {
    const __mmask16 m = tail_mask512(n - i);
    const __m512 d = _mm512_sub_ps(_mm512_maskz_loadu_ps(m, q + i), _mm512_maskz_loadu_ps(m, v + i));
    a1 = _mm512_fmadd_ps(d, d, a1);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}

// Four queries against four rows. Each accumulator of the row kernel above (a0..a3: the 16-float
// groups at offsets 0, 16, 32 and 48 of each 64, then a0 the remaining whole groups and a1 the masked
// tail) is rebuilt here for all sixteen pairs at once, one accumulator at a time, with the same
// operations in the same order; the sums then combine as the row kernel combines them. So every
// result equals the row kernel's bit for bit, while each load of a row or query group feeds four FMAs.
namespace {

constexpr std::uint32_t kTilePairs = kTileSide * kTileSide;
constexpr std::uint32_t kGroupFloats = kUnroll * kAvx512Lanes;  // floats per step of the row kernel's main loop

template <bool L2>
__attribute__((target("avx512f"), always_inline)) inline __m512 tile_term(__m512 qv, __m512 rv, __m512 acc) noexcept {
  if constexpr (L2) {
    const __m512 d = _mm512_sub_ps(qv, rv);
    return _mm512_fmadd_ps(d, d, acc);
  } else {
    return _mm512_fmadd_ps(qv, rv, acc);
  }
}

// Adds the 16-float groups at `at` of every query and row to acc (masked by m).
template <bool L2>
__attribute__((target("avx512f"), always_inline)) inline void tile_step(const float* const* q, const float* const* v,
                                                                       std::uint32_t at, __mmask16 m,
                                                                       __m512* acc) noexcept {
  __m512 qv[kTileSide], rv[kTileSide];
#pragma GCC unroll 4
  for (std::uint32_t j = 0; j < kTileSide; ++j) {
    qv[j] = m == 0xFFFF ? _mm512_loadu_ps(q[j] + at) : _mm512_maskz_loadu_ps(m, q[j] + at);
    rv[j] = m == 0xFFFF ? _mm512_loadu_ps(v[j] + at) : _mm512_maskz_loadu_ps(m, v[j] + at);
  }
#pragma GCC unroll 4
  for (std::uint32_t r = 0; r < kTileSide; ++r)
#pragma GCC unroll 4
    for (std::uint32_t j = 0; j < kTileSide; ++j) acc[r * kTileSide + j] = tile_term<L2>(qv[j], rv[r], acc[r * kTileSide + j]);
}

template <bool L2>
__attribute__((target("avx512f"))) void tile_avx512(const float* const* q, const float* const* v, std::uint32_t n,
                                                    float* out) noexcept {
  const std::uint32_t main_end = n - n % kGroupFloats;
  std::uint32_t rest_end = main_end;  // after the whole groups the row kernel adds to a0
  while (rest_end + kAvx512Lanes <= n) rest_end += kAvx512Lanes;
  __m512 sums[kUnroll][kTilePairs];
  constexpr __mmask16 kAll = 0xFFFF;
  for (std::uint32_t slot = 0; slot < kUnroll; ++slot) {
    __m512 acc[kTilePairs];
#pragma GCC unroll 16
    for (std::uint32_t p = 0; p < kTilePairs; ++p) acc[p] = _mm512_setzero_ps();
    for (std::uint32_t i = slot * kAvx512Lanes; i < main_end; i += kGroupFloats) tile_step<L2>(q, v, i, kAll, acc);
    if (slot == 0)
      for (std::uint32_t i = main_end; i < rest_end; i += kAvx512Lanes) tile_step<L2>(q, v, i, kAll, acc);
    if (slot == 1 && rest_end < n) tile_step<L2>(q, v, rest_end, tail_mask512(n - rest_end), acc);
#pragma GCC unroll 16
    for (std::uint32_t p = 0; p < kTilePairs; ++p) sums[slot][p] = acc[p];
  }
  for (std::uint32_t p = 0; p < kTilePairs; ++p)
    out[p] = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(sums[0][p], sums[1][p]), _mm512_add_ps(sums[2][p], sums[3][p])));
}

}  // namespace

__attribute__((target("avx512f"))) void tile_dot_avx512(const float* const* q, const float* const* v, std::uint32_t n,
                                                        float* out) noexcept {
  tile_avx512<false>(q, v, n, out);
}

__attribute__((target("avx512f"))) void tile_l2sq_avx512(const float* const* q, const float* const* v, std::uint32_t n,
                                                         float* out) noexcept {
  tile_avx512<true>(q, v, n, out);
}

// ---- selection ------------------------------------------------------------------------------------

namespace {

constexpr KernelTable kPortableTable{&score_dot_portable, &score_l2sq_portable, nullptr, nullptr, nullptr};
constexpr KernelTable kAvx2Table{&score_dot_avx2, &score_l2sq_avx2, nullptr, nullptr, nullptr};
constexpr KernelTable kAvx512Table{&score_dot_avx512, &score_l2sq_avx512, &tile_dot_avx512, &tile_l2sq_avx512,
                                   &score_panel_avx512};

}  // namespace

const KernelTable* kernel_table(Kernel kernel) noexcept {
  static const bool has_avx2 = cpu_has_avx2_fma();
  static const bool has_avx512 = cpu_has_avx512f();
  switch (kernel) {
    case Kernel::best:
      if (has_avx512) return &kAvx512Table;
      return has_avx2 ? &kAvx2Table : &kPortableTable;
    case Kernel::portable: return &kPortableTable;
    case Kernel::avx2: return has_avx2 ? &kAvx2Table : nullptr;
    case Kernel::avx512: return has_avx512 ? &kAvx512Table : nullptr;
  }
  return nullptr;
}

}  // namespace weir::core::detail

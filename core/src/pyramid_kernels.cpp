// The level-0 pyramid kernel in three code paths. The vector paths take a group of entries at once
// and reduce them together: each step combines two vectors with two lane shuffles and one min (or
// max), so a group of G entries costs about 3G vector operations per side instead of a horizontal
// reduction per entry. The samples may be changing under a racing reader's feet only in the arena,
// never here: the writer reduces its own block.
// GCC 12's AVX-512 headers seed results with a self-initialised "undefined" vector, which its own
// -W(maybe-)uninitialized then reports wherever the intrinsic is inlined (GCC PR 105593): the warning
// belongs to the header, and is off for this file's kernels only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "cpu_features.hpp"
#include "pyramid_kernels.hpp"
#include "weir/core/limits.hpp"

namespace weir::core::detail {

static_assert(kPyramidFactor % 16 == 0, "the kernels below fold runs of 16-float vectors");
constexpr std::size_t kVectors256 = kPyramidFactor / 8;   // ymm loads per entry
constexpr std::size_t kVectors512 = kPyramidFactor / 16;  // zmm loads per entry

// ---- portable -------------------------------------------------------------------------------------

void entry_ranges_portable(const float* x, std::size_t entries, float* lo, float* hi) noexcept {
  constexpr int kHalf = kPyramidFactor / 2;
  for (std::size_t e = 0; e < entries; ++e, x += kPyramidFactor) {
    float v[kPyramidFactor];
    std::memcpy(v, x, sizeof(v));
    // A halving tree of independent lanes the compiler turns into vector ops (a running scalar min
    // is a serial chain it must not reorder).
    float l[kHalf], h[kHalf];
    for (int i = 0; i < kHalf; ++i) {
      l[i] = v[i] < v[i + kHalf] ? v[i] : v[i + kHalf];
      h[i] = v[i] > v[i + kHalf] ? v[i] : v[i + kHalf];
    }
    for (int w = kHalf / 2; w >= 1; w /= 2)
      for (int i = 0; i < w; ++i) {
        l[i] = l[i] < l[i + w] ? l[i] : l[i + w];
        h[i] = h[i] > h[i + w] ? h[i] : h[i + w];
      }
    lo[e] = l[0];
    hi[e] = h[0];
  }
}

// ---- AVX2: 8 entries per group -------------------------------------------------------

namespace {

struct Min256 {
  __attribute__((target("avx2"))) static __m256 op(__m256 a, __m256 b) noexcept { return _mm256_min_ps(a, b); }
};
struct Max256 {
  __attribute__((target("avx2"))) static __m256 op(__m256 a, __m256 b) noexcept { return _mm256_max_ps(a, b); }
};

// v[k] holds 8 partial results of entry k (k < 8); returns lane 4c+j = result of entry 2j+c.
template <class Op>
__attribute__((target("avx2"))) inline __m256 reduce8(const __m256* v) noexcept {
  __m256 m2[4], m3[2];
  for (int i = 0; i < 4; ++i)  // 128-bit halves: lane half c of m2[i] = entry 2i+c, 4 values
    m2[i] = Op::op(_mm256_permute2f128_ps(v[2 * i], v[2 * i + 1], 0x20),
                   _mm256_permute2f128_ps(v[2 * i], v[2 * i + 1], 0x31));
  for (int h = 0; h < 2; ++h)  // elements 0,1 of half c: entry 4h+c; elements 2,3: entry 4h+2+c
    m3[h] = Op::op(_mm256_shuffle_ps(m2[2 * h], m2[2 * h + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                   _mm256_shuffle_ps(m2[2 * h], m2[2 * h + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  return Op::op(_mm256_shuffle_ps(m3[0], m3[1], _MM_SHUFFLE(2, 0, 2, 0)),
                _mm256_shuffle_ps(m3[0], m3[1], _MM_SHUFFLE(3, 1, 3, 1)));
}

}  // namespace

__attribute__((target("avx2"))) void entry_ranges_avx2(const float* x, std::size_t entries, float* lo,
                                                        float* hi) noexcept {
  constexpr std::size_t kGroup = 8;
  // Lane 4c+j holds entry 2j+c: gather entry e from lane 4(e&1) + (e>>1).
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  std::size_t e = 0;
  for (; e + kGroup <= entries; e += kGroup, x += kGroup * kPyramidFactor) {
    __m256 mn[kGroup], mx[kGroup];
    for (std::size_t k = 0; k < kGroup; ++k) {  // entry k's vectors folded into one min and one max
      const float* p = x + k * kPyramidFactor;
      mn[k] = mx[k] = _mm256_loadu_ps(p);
      for (std::size_t i = 1; i < kVectors256; ++i) {
        const __m256 v = _mm256_loadu_ps(p + i * 8);
        mn[k] = _mm256_min_ps(mn[k], v);
        mx[k] = _mm256_max_ps(mx[k], v);
      }
    }
    _mm256_storeu_ps(lo + e, _mm256_permutevar8x32_ps(reduce8<Min256>(mn), order));
    _mm256_storeu_ps(hi + e, _mm256_permutevar8x32_ps(reduce8<Max256>(mx), order));
  }
  entry_ranges_portable(x, entries - e, lo + e, hi + e);
}

// ---- AVX-512: 16 entries per group ---------------------------------------------------

namespace {

struct Min512 {
  __attribute__((target("avx512f"))) static __m512 op(__m512 a, __m512 b) noexcept { return _mm512_min_ps(a, b); }
};
struct Max512 {
  __attribute__((target("avx512f"))) static __m512 op(__m512 a, __m512 b) noexcept { return _mm512_max_ps(a, b); }
};

// v[j] holds entry 2j in its low 256 bits and entry 2j+1 in its high 256 bits, 8 partial results
// each (j < 8); returns lane 4k+j = result of entry 4j+k.
template <class Op>
__attribute__((target("avx512f"))) inline __m512 reduce16(const __m512* v) noexcept {
  __m512 m2[4], m3[2];
  for (int i = 0; i < 4; ++i)  // 128-bit quarter k of m2[i] = entry 4i+k, 4 values
    m2[i] = Op::op(_mm512_shuffle_f32x4(v[2 * i], v[2 * i + 1], _MM_SHUFFLE(2, 0, 2, 0)),
                   _mm512_shuffle_f32x4(v[2 * i], v[2 * i + 1], _MM_SHUFFLE(3, 1, 3, 1)));
  for (int h = 0; h < 2; ++h)  // elements 0,1 of quarter k: entry 8h+k; elements 2,3: entry 8h+4+k
    m3[h] = Op::op(_mm512_shuffle_ps(m2[2 * h], m2[2 * h + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                   _mm512_shuffle_ps(m2[2 * h], m2[2 * h + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  return Op::op(_mm512_shuffle_ps(m3[0], m3[1], _MM_SHUFFLE(2, 0, 2, 0)),
                _mm512_shuffle_ps(m3[0], m3[1], _MM_SHUFFLE(3, 1, 3, 1)));
}

// One entry's kVectors512 vectors folded lane-wise into a min and a max vector.
__attribute__((target("avx512f"))) inline void fold512(const float* p, __m512& mn, __m512& mx) noexcept {
  mn = mx = _mm512_loadu_ps(p);
  for (std::size_t i = 1; i < kVectors512; ++i) {
    const __m512 v = _mm512_loadu_ps(p + i * 16);
    mn = _mm512_min_ps(mn, v);
    mx = _mm512_max_ps(mx, v);
  }
}

}  // namespace

__attribute__((target("avx512f"))) void entry_ranges_avx512(const float* x, std::size_t entries, float* lo,
                                                             float* hi) noexcept {
  constexpr std::size_t kGroup = 16;
  // Lane 4k+j holds entry 4j+k: gather entry e from lane 4(e&3) + (e>>2).
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  std::size_t e = 0;
  for (; e + kGroup <= entries; e += kGroup, x += kGroup * kPyramidFactor) {
    __m512 mn[kGroup / 2], mx[kGroup / 2];
    for (std::size_t j = 0; j < kGroup / 2; ++j) {
      // Entries 2j and 2j+1, each folded into one min and one max vector ...
      __m512 amn, amx, bmn, bmx;
      fold512(x + 2 * j * kPyramidFactor, amn, amx);
      fold512(x + (2 * j + 1) * kPyramidFactor, bmn, bmx);
      // ... then their low halves side by side against their high halves.
      mn[j] = _mm512_min_ps(_mm512_shuffle_f32x4(amn, bmn, _MM_SHUFFLE(1, 0, 1, 0)),
                            _mm512_shuffle_f32x4(amn, bmn, _MM_SHUFFLE(3, 2, 3, 2)));
      mx[j] = _mm512_max_ps(_mm512_shuffle_f32x4(amx, bmx, _MM_SHUFFLE(1, 0, 1, 0)),
                            _mm512_shuffle_f32x4(amx, bmx, _MM_SHUFFLE(3, 2, 3, 2)));
    }
    _mm512_storeu_ps(lo + e, _mm512_permutexvar_ps(order, reduce16<Min512>(mn)));
    _mm512_storeu_ps(hi + e, _mm512_permutexvar_ps(order, reduce16<Max512>(mx)));
  }
  entry_ranges_avx2(x, entries - e, lo + e, hi + e);  // AVX-512F implies AVX2
}

// ---- dispatch -------------------------------------------------------------------------------------

namespace {

using Kernel = void (*)(const float*, std::size_t, float*, float*) noexcept;

Kernel pick_kernel() noexcept {
  if (cpu_has_avx512f()) return &entry_ranges_avx512;
  return cpu_has_avx2_fma() ? &entry_ranges_avx2 : &entry_ranges_portable;
}

const Kernel kBestKernel = pick_kernel();  // once, at load: no guard on the hot path

}  // namespace

void entry_ranges(const float* x, std::size_t entries, float* lo, float* hi) noexcept {
  const Kernel kernel = kBestKernel != nullptr ? kBestKernel : pick_kernel();  // null only during static init
  kernel(x, entries, lo, hi);
}

}  // namespace weir::core::detail

#pragma GCC diagnostic pop

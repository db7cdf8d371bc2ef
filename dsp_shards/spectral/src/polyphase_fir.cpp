#include "weir/dsp/detail/polyphase_fir.hpp"

#include <algorithm>
#include <cstring>

#include "weir/dsp/spectral_limits.hpp"

namespace weir::dsp::detail {

namespace {

// out[k] = sum over phases p, taps q of taps_p[q] * row_p[k + q], k < count; rows `stride` apart.
// Four vector registers of outputs side by side (W floats each), and the even and odd taps of each
// phase into two partial sums: eight independent add chains in registers. Every output sums in
// the same order (even taps, odd taps, then the two) in the lanes and in the scalar tail, and no
// product is fused into its add, so the result does not depend on where an output falls.
template <std::size_t W>
[[gnu::always_inline]] inline void polyphase_kernel(const float* taps, const std::uint32_t* len, std::size_t phases,
                                                    const float* rows, std::size_t stride, std::size_t count,
                                                    float* out) noexcept {
  typedef float V __attribute__((vector_size(W * sizeof(float))));  // NOLINT: a GCC vector of W floats
  constexpr std::size_t kLanes = 4 * W;
  std::size_t k = 0;
  for (; k + kLanes <= count; k += kLanes) {
    V e[4] = {}, o[4] = {};
    const float* t = taps;
    for (std::size_t p = 0; p < phases; ++p) {
      const float* row = rows + p * stride + k;
      std::size_t q = 0;
      for (; q + 2 <= len[p]; q += 2) {
        const float t0 = t[q], t1 = t[q + 1];
#pragma GCC unroll 4  // the accumulators stay in registers only if every index is a constant
        for (std::size_t r = 0; r < 4; ++r) {
          V a, b;
          std::memcpy(&a, row + q + r * W, sizeof a);
          std::memcpy(&b, row + q + 1 + r * W, sizeof b);
          e[r] += t0 * a;
          o[r] += t1 * b;
        }
      }
      if (q < len[p]) {
        const float t0 = t[q];
#pragma GCC unroll 4
        for (std::size_t r = 0; r < 4; ++r) {
          V a;
          std::memcpy(&a, row + q + r * W, sizeof a);
          e[r] += t0 * a;
        }
      }
      t += len[p];
    }
#pragma GCC unroll 4
    for (std::size_t r = 0; r < 4; ++r) {
      const V sum = e[r] + o[r];
      std::memcpy(out + k + r * W, &sum, sizeof sum);
    }
  }
  for (; k < count; ++k) {
    float even = 0, odd = 0;
    const float* t = taps;
    for (std::size_t p = 0; p < phases; ++p) {
      const float* row = rows + p * stride + k;
      std::size_t q = 0;
      for (; q + 2 <= len[p]; q += 2) {
        even += t[q] * row[q];
        odd += t[q + 1] * row[q + 1];
      }
      if (q < len[p]) even += t[q] * row[q];
      t += len[p];
    }
    out[k] = even + odd;
  }
}

// Four registers of outputs per extension: 64 lanes with AVX-512, 32 with AVX2, 16 with SSE2.
[[gnu::target("avx512f")]] void polyphase_avx512(const float* taps, const std::uint32_t* len, std::size_t phases,
                                                 const float* rows, std::size_t stride, std::size_t count,
                                                 float* out) noexcept {
  polyphase_kernel<16>(taps, len, phases, rows, stride, count, out);
}
[[gnu::target("avx2,fma")]] void polyphase_avx2(const float* taps, const std::uint32_t* len, std::size_t phases,
                                                const float* rows, std::size_t stride, std::size_t count,
                                                float* out) noexcept {
  polyphase_kernel<8>(taps, len, phases, rows, stride, count, out);
}
void polyphase_portable(const float* taps, const std::uint32_t* len, std::size_t phases, const float* rows,
                        std::size_t stride, std::size_t count, float* out) noexcept {
  polyphase_kernel<4>(taps, len, phases, rows, stride, count, out);
}

using PolyphaseFn = void (*)(const float*, const std::uint32_t*, std::size_t, const float*, std::size_t, std::size_t,
                             float*) noexcept;

PolyphaseFn pick_kernel() noexcept {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return &polyphase_avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return &polyphase_avx2;
  return &polyphase_portable;
}

const PolyphaseFn polyphase_outputs = pick_kernel();  // picked once, before main

}  // namespace

PolyphaseFir::PolyphaseFir(std::span<const float> taps, std::uint32_t factor)
    : taps_(taps.size()), factor_(factor), line_(taps.size() - 1 + kFilterChunkSamples) {
  // Output j at input n reads x[n - taps + 1 + i] * taps[taps - 1 - i], i < taps: oldest first.
  // Phase p holds i = p, p + factor, ...; its row holds x[n - taps + 1 + p + factor * q].
  phase_len_.resize(factor_);
  for (std::size_t p = 0; p < factor_; ++p) {
    const std::size_t before = phase_taps_.size();
    for (std::size_t i = p; i < taps_; i += factor_) phase_taps_.push_back(taps[taps_ - 1 - i]);
    phase_len_[p] = static_cast<std::uint32_t>(phase_taps_.size() - before);
  }
  const std::size_t max_outputs = kFilterChunkSamples / factor_ + 1;
  row_stride_ = max_outputs + (taps_ + factor_ - 1) / factor_;
  if (factor_ > 1) rows_.resize(factor_ * row_stride_);
}

std::size_t PolyphaseFir::process(std::span<const float> in, std::span<float> out, std::size_t& until_output) noexcept {
  const std::size_t keep = taps_ - 1;
  std::size_t written = 0;
  while (!in.empty()) {
    const std::size_t n = std::min<std::size_t>(in.size(), kFilterChunkSamples);
    std::memcpy(line_.data() + keep, in.data(), n * sizeof(float));
    const std::size_t first = until_output - 1;  // chunk index of the first output
    if (first < n) {
      const std::size_t count = 1 + (n - 1 - first) / factor_;
      // The window of the output at chunk index i starts at line_[i] (keep samples of history first).
      const float* x = line_.data() + first;
      if (factor_ == 1) {
        polyphase_outputs(phase_taps_.data(), phase_len_.data(), 1, x, 0, count, out.data() + written);
      } else {
        for (std::size_t p = 0; p < factor_; ++p) {
          float* row = rows_.data() + p * row_stride_;
          const std::size_t row_n = count + phase_len_[p] - 1;
          for (std::size_t j = 0; j < row_n; ++j) row[j] = x[j * factor_ + p];
        }
        polyphase_outputs(phase_taps_.data(), phase_len_.data(), factor_, rows_.data(), row_stride_, count,
                          out.data() + written);
      }
      written += count;
      until_output = first + count * factor_ - n + 1;
    } else {
      until_output -= n;
    }
    std::memmove(line_.data(), line_.data() + n, keep * sizeof(float));
    in = in.subspan(n);
  }
  return written;
}

void PolyphaseFir::clear() noexcept { std::fill(line_.begin(), line_.end(), 0.0F); }

}  // namespace weir::dsp::detail

#include "weir/dsp/moments.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "weir/core/target_clones.hpp"

namespace weir::dsp {

namespace {

// Independent accumulators per pass: the lane loops below are what the compiler turns into vector
// code (SLP over a fixed-length inner loop), with no reassociation flags, and each partial sum
// stays a sixteenth as long. Sixteen lanes fill one AVX-512 register of floats, two of doubles,
// or four AVX2 registers: enough independent chains to hide the add latency.
constexpr std::size_t kLanes = 16;

// min and max as the scalar code always had them: `v < lo ? v : lo` keeps lo when v is NaN (the
// comparison is false), so a NaN sample is skipped, and a NaN first sample sticks. This is exactly
// minps/maxps with v as the first operand, so the lanes vectorise without changing the result.
template <class T>
[[gnu::always_inline]] inline T lower(T lo, T v) noexcept {
  return v < lo ? v : lo;
}
template <class T>
[[gnu::always_inline]] inline T higher(T hi, T v) noexcept {
  return hi < v ? v : hi;
}

template <class T>
[[gnu::always_inline]] inline double pairwise(const T (&lane)[kLanes]) noexcept {
  double level[kLanes / 2];
  for (std::size_t j = 0; j < kLanes / 2; ++j) level[j] = static_cast<double>(lane[j]) + static_cast<double>(lane[j + kLanes / 2]);
  for (std::size_t width = kLanes / 4; width > 0; width /= 2)
    for (std::size_t j = 0; j < width; ++j) level[j] += level[j + width];
  return level[0];
}

// The shifted, corrected two-pass of moments_of over samples of type T (float or double), with
// every sum in double. Deviations are taken from x[0] first (x - shift is exact for samples near
// the offset, Sterbenz), then from the first pass's mean; the residual sum of the second pass
// corrects the first pass's rounding (Chan, Golub, LeVeque 1983).
template <class T>
[[gnu::always_inline]] inline Moments moments_kernel(const T* x, std::size_t n) noexcept {
  Moments out;
  if (n == 0) return out;
  const double shift = static_cast<double>(x[0]);
  T lo[kLanes], hi[kLanes];
  double sum[kLanes];
  for (std::size_t j = 0; j < kLanes; ++j) {
    lo[j] = hi[j] = x[0];
    sum[j] = 0;
  }
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (std::size_t j = 0; j < kLanes; ++j) {
      const T v = x[i + j];
      sum[j] += static_cast<double>(v) - shift;
      lo[j] = lower(lo[j], v);
      hi[j] = higher(hi[j], v);
    }
  }
  for (; i < n; ++i) {
    sum[0] += static_cast<double>(x[i]) - shift;
    lo[0] = lower(lo[0], x[i]);
    hi[0] = higher(hi[0], x[i]);
  }
  T lo_all = lo[0], hi_all = hi[0];
  for (std::size_t j = 1; j < kLanes; ++j) {
    lo_all = lower(lo_all, lo[j]);
    hi_all = higher(hi_all, hi[j]);
  }
  const double count = static_cast<double>(n);
  const double first_mean = pairwise(sum) / count;
  double sq[kLanes], dev[kLanes];
  for (std::size_t j = 0; j < kLanes; ++j) sq[j] = dev[j] = 0;
  for (i = 0; i + kLanes <= n; i += kLanes) {
    for (std::size_t j = 0; j < kLanes; ++j) {
      const double d = (static_cast<double>(x[i + j]) - shift) - first_mean;
      sq[j] += d * d;
      dev[j] += d;
    }
  }
  for (; i < n; ++i) {
    const double d = (static_cast<double>(x[i]) - shift) - first_mean;
    sq[0] += d * d;
    dev[0] += d;
  }
  const double residual = pairwise(dev);
  out.count = n;
  out.mean = shift + (first_mean + residual / count);
  out.m2 = std::max(0.0, pairwise(sq) - residual * residual / count);
  out.min = static_cast<double>(lo_all);
  out.max = static_cast<double>(hi_all);
  return out;
}

// One clone per vector extension, picked once at load time (an ifunc): the portable build's SSE2
// lanes, AVX2 and AVX-512 where the CPU has them. Same code, so the same results up to the order
// of the lane sums.
WEIR_TARGET_CLONES Moments moments_f32(const float* x, std::size_t n) noexcept {
  return moments_kernel(x, n);
}

WEIR_TARGET_CLONES Moments moments_f64(const double* x, std::size_t n) noexcept {
  return moments_kernel(x, n);
}

}  // namespace

double Moments::stddev() const noexcept { return std::sqrt(variance()); }

double Moments::rms() const noexcept { return count > 0 ? std::sqrt(mean * mean + variance()) : 0.0; }

Moments merge(const Moments& a, const Moments& b) noexcept {
  if (a.count == 0) return b;
  if (b.count == 0) return a;
  const double na = static_cast<double>(a.count);
  const double nb = static_cast<double>(b.count);
  const double n = na + nb;
  const double delta = b.mean - a.mean;  // small where it matters: both means carry the offset
  Moments out;
  out.count = a.count + b.count;
  out.mean = a.mean + delta * (nb / n);
  out.m2 = a.m2 + b.m2 + delta * delta * (na * nb / n);
  out.min = std::min(a.min, b.min);
  out.max = std::max(a.max, b.max);
  return out;
}

Moments moments_of(std::span<const double> x) noexcept { return moments_f64(x.data(), x.size()); }

Moments moments_of(std::span<const float> x) noexcept { return moments_f32(x.data(), x.size()); }

}  // namespace weir::dsp

#include "weir/dsp/moments.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace weir::dsp {

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

Moments moments_of(std::span<const double> x) noexcept {
  Moments out;
  const std::size_t n = x.size();
  if (n == 0) return out;
  const double shift = x[0];  // x - shift is exact for samples near the offset (Sterbenz)
  // Four independent accumulators: the loops vectorise without reassociation flags, and the
  // partial sums stay a quarter as long.
  double sum[4] = {0, 0, 0, 0};
  double lo = x[0], hi = x[0];
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    for (std::size_t j = 0; j < 4; ++j) {
      const double v = x[i + j];
      sum[j] += v - shift;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  for (; i < n; ++i) {
    sum[0] += x[i] - shift;
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  const double count = static_cast<double>(n);
  const double first_mean = ((sum[0] + sum[1]) + (sum[2] + sum[3])) / count;
  double sq[4] = {0, 0, 0, 0};
  double dev[4] = {0, 0, 0, 0};
  for (i = 0; i + 4 <= n; i += 4) {
    for (std::size_t j = 0; j < 4; ++j) {
      const double d = (x[i + j] - shift) - first_mean;
      sq[j] += d * d;
      dev[j] += d;
    }
  }
  for (; i < n; ++i) {
    const double d = (x[i] - shift) - first_mean;
    sq[0] += d * d;
    dev[0] += d;
  }
  // The residual sum of deviations corrects the first pass's rounding (Chan, Golub, LeVeque 1983).
  const double residual = (dev[0] + dev[1]) + (dev[2] + dev[3]);
  out.count = n;
  out.mean = shift + (first_mean + residual / count);
  out.m2 = std::max(0.0, ((sq[0] + sq[1]) + (sq[2] + sq[3])) - residual * residual / count);
  out.min = lo;
  out.max = hi;
  return out;
}

}  // namespace weir::dsp

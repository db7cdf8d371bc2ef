#pragma once
// Trapezoidal shaper with pole-zero correction (Jordanov & Knoll, NIM A 345 (1994) 337), recursive:
// O(1) per sample for any rise and flat top. An exponential pulse A exp(-n/tau) that starts at
// sample a comes out as a trapezoid: rising over samples a .. a+k-1, flat at exactly A over
// a+k-1 .. a+k+m-1, back to 0 at a+2k+m-1. tau = 0 stands for no decay at all (tau -> infinity,
// M -> infinity: a step, e.g. from a reset preamplifier); then output = p / k, the limit of
// s / (k (M + 1)), and a step of A gives the same trapezoid.
//
// The J&K recursion  d = v[n] - v[n-k] - v[n-l] + v[n-k-l],  p += d,  s += p + M d  (l = k + m,
// M = 1 / (exp(1/tau) - 1)) is computed here in the equivalent form
//   W[n] = sum of the last k inputs,  p[n] = W[n] - W[n-l],  U[n] = sum of the last l values of W,
//   s[n] = U[n] + M p[n],  output = s / (k (M + 1)),
// where W and U are running sums that are re-summed exactly once per k (resp. l) samples. The
// direct recursion integrates its own rounding errors twice and drifts without bound on a stream
// that runs for weeks; this form's error stays bounded.
#include <cstdint>
#include <vector>

#include "weir/core/error.hpp"

namespace weir::dsp {

class Trapezoid {
 public:
  /// rise_samples = k >= 1, flat_samples = m >= 0, tau_samples = the input's exponential decay in
  /// samples (0: no pole-zero correction). Fails naming the value for k = 0, k or m above
  /// kMaxShapingSamples, a negative or non-finite tau. Thread: control (allocates).
  [[nodiscard]] static core::Result<Trapezoid> create(std::uint32_t rise_samples, std::uint32_t flat_samples,
                                                      double tau_samples);

  /// Feeds one input sample and returns the shaped output, normalised to the pulse amplitude.
  /// Hot path: no allocation. Thread: one DSP thread.
  double step(double v) noexcept {
    const double oldest_v = v_ring_[v_at_];  // v[n-k]
    v_ring_[v_at_] = v;
    sum_v_ += v - oldest_v;
    if (++v_at_ == rise_) {
      v_at_ = 0;
      sum_v_ = resum(v_ring_);  // exact again: the running sum's rounding does not accumulate
    }
    const double oldest_w = w_ring_[w_at_];  // W[n-l]
    w_ring_[w_at_] = sum_v_;
    const double p = sum_v_ - oldest_w;
    sum_w_ += p;
    if (++w_at_ == length_l_) {
      w_at_ = 0;
      sum_w_ = resum(w_ring_);
    }
    return sum_w_ * sum_gain_ + p * difference_gain_;
  }

  /// Forgets all input: the output starts from 0 as if the input had been 0 forever.
  void reset() noexcept;

  [[nodiscard]] std::uint32_t rise() const noexcept { return rise_; }
  [[nodiscard]] std::uint32_t flat() const noexcept { return length_l_ - rise_; }
  /// Samples from a step's first sample to the end of its trapezoid: 2k + m.
  [[nodiscard]] std::uint32_t length() const noexcept { return rise_ + length_l_; }

  static constexpr std::uint32_t kMaxShapingSamples = 1U << 20;  // rise or flat top; 8 MiB of ring each

 private:
  Trapezoid(std::uint32_t rise_samples, std::uint32_t flat_samples, double tau_samples);
  static double resum(const std::vector<double>& ring) noexcept;

  std::uint32_t rise_;      // k
  std::uint32_t length_l_;  // l = k + m
  double sum_gain_ = 0;         // 1 / (k (M + 1)); 0 for a step input
  double difference_gain_ = 0;  // M / (k (M + 1)); 1 / k for a step input
  std::vector<double> v_ring_, w_ring_;  // the last k inputs, the last l values of W
  std::uint32_t v_at_ = 0, w_at_ = 0;    // oldest entry = next to overwrite
  double sum_v_ = 0, sum_w_ = 0;         // W[n] and U[n]
};

}  // namespace weir::dsp

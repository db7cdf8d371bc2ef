#pragma once
// The history a FIR needs, stored twice in a row so the newest `length` samples are always one
// contiguous run (x[n], x[n-1], ...): the dot product never wraps, and pushing costs two stores.
#include <algorithm>
#include <cstddef>
#include <vector>

namespace weir::dsp::detail {

class DelayLine {
 public:
  explicit DelayLine(std::size_t length) : data_(2 * length), length_(length) {}

  void push(float x) noexcept {
    pos_ = (pos_ == 0 ? length_ : pos_) - 1;
    data_[pos_] = x;
    data_[pos_ + length_] = x;
  }
  /// The newest sample first, then older ones: `length` floats.
  [[nodiscard]] const float* newest_first() const noexcept { return data_.data() + pos_; }
  void clear() noexcept { std::fill(data_.begin(), data_.end(), 0.0F); }

 private:
  std::vector<float> data_;
  std::size_t length_;
  std::size_t pos_ = 0;  // index of the newest sample in the first copy
};

/// sum taps[i] * x[i]. Four partial sums keep the adds independent, so the loop pipelines without
/// reassociation flags; the summation order is fixed, so results do not depend on block sizes.
[[nodiscard]] inline float dot(const float* taps, const float* x, std::size_t n) noexcept {
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += taps[i] * x[i];
    s1 += taps[i + 1] * x[i + 1];
    s2 += taps[i + 2] * x[i + 2];
    s3 += taps[i + 3] * x[i + 3];
  }
  for (; i < n; ++i) s0 += taps[i] * x[i];
  return (s0 + s1) + (s2 + s3);
}

}  // namespace weir::dsp::detail

#pragma once
// A channel's recent min/max at one resolution, kept by `weir serve` itself: one entry per `factor`
// samples over the newest `capacity` entries. The arena's pyramid level 0 reaches back only as far
// as the ring; this reaches as far back as level 1 needs to give half a view's columns, so the
// resolution falls smoothly from raw samples to the pyramid's coarse levels.
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace weir::serve {

/// Thread: one thread (the server's io thread).
class MinMaxHistory {
 public:
  /// `capacity` is rounded up to a power of two. Requires: factor > 0.
  MinMaxHistory(std::uint32_t factor, std::size_t capacity);

  /// Adds samples [first, first + values.size()); a hole or an overlap with what is held restarts it.
  /// Allocates nothing.
  void append(std::uint64_t first, std::span<const float> values) noexcept;
  void reset() noexcept;

  [[nodiscard]] std::uint32_t factor() const noexcept { return factor_; }
  /// The first sample of the oldest complete entry held, and the end of the newest (equal: empty).
  [[nodiscard]] std::uint64_t begin() const noexcept { return begin_entry_ * factor_; }
  [[nodiscard]] std::uint64_t end() const noexcept { return end_entry_ * factor_; }
  /// Entry `e` (samples [e * factor, (e + 1) * factor)). Requires: begin() <= e * factor < end().
  void entry(std::uint64_t e, float& lo, float& hi) const noexcept {
    lo = lo_[e & mask_];
    hi = hi_[e & mask_];
  }

 private:
  std::uint32_t factor_;
  std::vector<float> lo_, hi_;
  std::uint64_t mask_;
  std::uint64_t begin_entry_ = 0, end_entry_ = 0;  // complete entries [begin, end)
  std::uint64_t next_sample_ = 0;                  // the sample the next append must start at
  bool running_ = false;
  float acc_lo_ = std::numeric_limits<float>::infinity();  // the entry being filled
  float acc_hi_ = -std::numeric_limits<float>::infinity();
};

}  // namespace weir::serve

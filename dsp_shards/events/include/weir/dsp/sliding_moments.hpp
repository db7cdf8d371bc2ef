#pragma once
// Moments over the last N blocks of a stream, from per-block aggregates only. A two-stack queue
// (back: blocks pushed since the last flip, with their running merge; front: suffix merges of the
// older blocks) makes push and value O(1) amortised with no subtraction of aggregates, which a
// running sum would need and which loses precision (and min/max cannot be subtracted at all).
#include <cstdint>
#include <vector>

#include "weir/core/error.hpp"
#include "weir/dsp/moments.hpp"

namespace weir::dsp {

/// Thread: one thread at a time (the shard's DSP thread); create() on the control thread.
class SlidingMoments {
 public:
  /// A window of `window_blocks` block aggregates. Fails for 0 or more than kMaxWindowBlocks.
  /// Thread: control (allocates).
  [[nodiscard]] static core::Result<SlidingMoments> create(std::uint32_t window_blocks);

  /// Appends one block's aggregate, dropping the oldest once the window is full.
  /// Hot path: no allocation; O(1) amortised, O(window) once every `window` pushes.
  void push(const Moments& block) noexcept;
  /// The aggregate of the blocks in the window (fewer than the window until it has filled).
  [[nodiscard]] Moments value() const noexcept;
  /// Blocks in the window now.
  [[nodiscard]] std::uint32_t blocks() const noexcept { return front_end_ - front_begin_ + back_size_; }
  [[nodiscard]] std::uint32_t capacity() const noexcept { return capacity_; }
  /// Empties the window (after a gap in the input, for instance).
  void clear() noexcept;

  static constexpr std::uint32_t kMaxWindowBlocks = 1U << 20;  // 2 x 40 MiB of aggregates at most

 private:
  explicit SlidingMoments(std::uint32_t window_blocks);
  void pop_oldest() noexcept;

  std::uint32_t capacity_;
  std::vector<Moments> front_;  // front_[i]: merge of front elements i .. front_end_-1, oldest first
  std::uint32_t front_begin_ = 0, front_end_ = 0;
  std::vector<Moments> back_;   // raw aggregates pushed since the last flip, oldest first
  std::uint32_t back_size_ = 0;
  Moments back_total_;          // merge of back_[0 .. back_size_-1]
};

}  // namespace weir::dsp

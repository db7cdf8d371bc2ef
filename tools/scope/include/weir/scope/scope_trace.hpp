#pragma once
// What the scope knows of a channel's recent samples: the newest blocks it read in place, kept as
// floats by absolute sample index, where it looks for trigger crossings and draws spans finer
// than the channel's min/max pyramid resolves.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "weir/core/arena_layout.hpp"

namespace weir::scope {

/// Sample i of raw channel data as float (complex: the real part), as the pyramid folds it.
/// Requires: data holds at least i + 1 samples of dtype. Thread: any.
[[nodiscard]] float sample_as_float(core::Dtype dtype, const std::byte* data, std::size_t i) noexcept;

/// The most recent samples of one channel, as floats, by absolute sample index (0 = the first
/// sample ever written). Holds one contiguous run: appending after a gap starts over.
/// Thread: one owner.
class SampleHistory {
 public:
  /// Keeps at most `capacity` samples, rounded up to a power of two.
  explicit SampleHistory(std::size_t capacity);

  /// Adds samples [first, first + values.size()); a gap or overlap with what is held restarts the run.
  void append(std::uint64_t first, std::span<const float> values);
  /// Forgets everything (for example when a block turned out torn).
  void reset() noexcept { begin_ = end_ = 0; }

  [[nodiscard]] std::uint64_t begin() const noexcept { return begin_; }
  [[nodiscard]] std::uint64_t end() const noexcept { return end_; }
  [[nodiscard]] bool covers(std::uint64_t first, std::uint64_t count) const noexcept {
    return first >= begin_ && first + count <= end_ && count > 0;
  }
  [[nodiscard]] float at(std::uint64_t sample) const noexcept { return buf_[sample & mask_]; }

  /// Min/max of samples [first, first + count) in mins.size() equal buckets, like core::envelope().
  /// Requires: covers(first, count) and mins.size() == maxs.size().
  void envelope(std::uint64_t first, std::uint64_t count, std::span<float> mins, std::span<float> maxs) const noexcept;

  /// The newest rising crossing of level at or before `last` and at or after `first`; empty if none.
  [[nodiscard]] std::optional<std::uint64_t> last_crossing(float level, std::uint64_t first,
                                                           std::uint64_t last) const noexcept;

 private:
  std::vector<float> buf_;
  std::uint64_t mask_;
  std::uint64_t begin_ = 0;
  std::uint64_t end_ = 0;
};

}  // namespace weir::scope

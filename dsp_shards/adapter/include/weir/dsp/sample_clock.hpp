#pragma once
// Acquisition times of input samples, for shards whose outputs summarise a window of input: a
// result is stamped with the time of its window's first sample, which may lie some blocks back.
// The clock keeps the stamps of the last blocks since it was cleared (at start and at every input
// gap), so a sample's time is always taken from the block that holds it:
//   time(i) = realtime_ns of i's block + round((i - that block's first_sample) * 1e9 / rate)
#include <cstddef>
#include <cstdint>
#include <vector>

#include "weir/shard.h"

namespace weir::dsp {

class SampleClock {
 public:
  /// Keeps the stamps of up to `blocks` (at least 1) input blocks at `rate_hz` samples per second.
  /// Thread: control (allocates).
  SampleClock(std::size_t blocks, double rate_hz);

  /// Forgets every block: the next add starts a new contiguous run. Hot path.
  void clear() noexcept { count_ = 0; }
  /// Keeps `in`'s stamp (its first_sample, count, realtime_ns), dropping the oldest when full.
  /// Blocks come in stream order; an empty block is ignored. Hot path.
  void add(const weir_shard_block& in) noexcept;
  [[nodiscard]] bool empty() const noexcept { return count_ == 0; }

  /// The realtime ns of stream sample `index` by the formula above, from the block that holds it;
  /// an index before the oldest block kept (or past the newest) is extrapolated from that block at
  /// the nominal rate. 0 when no block is kept. Hot path.
  [[nodiscard]] std::uint64_t realtime_of(std::uint64_t index) const noexcept;

  /// The stamp of a sample `offset` samples after a block stamped `block_realtime_ns` (negative:
  /// before), at `rate_hz`: the one rounding every shard and test uses. Thread: any.
  [[nodiscard]] static std::uint64_t offset_time(std::uint64_t block_realtime_ns, double offset, double rate_hz) noexcept;

 private:
  struct Stamp {
    std::uint64_t first_sample = 0;
    std::uint64_t realtime_ns = 0;
    std::uint32_t count = 0;
  };
  std::vector<Stamp> ring_;
  std::size_t head_ = 0;   // where the next stamp goes
  std::size_t count_ = 0;  // stamps kept
  double rate_hz_;
};

}  // namespace weir::dsp

#pragma once
// The channel a query feeds: one sample per reply, gathered into blocks of the channel's size, and
// a gap block for each reply that never came (the block being filled is closed first, short), so a
// missed reply is never silent and every published sample sits where it was measured.
#include <cstdint>
#include <vector>

#include "weir/core/channel.hpp"
#include "weir/core/gap_reason.hpp"

namespace weir::acq::detail {

class QueryChannel {
 public:
  /// Takes the channel's writer; its dtype must be f32 or f64 (checked by the caller).
  explicit QueryChannel(core::ChannelWriter writer);

  /// Appends one reply's sample (read at realtime_ns); a full block is published. Returns the
  /// samples published now (0, or the block size). Thread: the driver's. Allocates nothing.
  std::uint64_t push(double value, std::uint64_t realtime_ns) noexcept;
  /// `replies` samples that never came: the block being filled is published as it is (short), then
  /// one gap block per missed sample, for `reason`. Returns the samples published by closing.
  std::uint64_t miss(std::uint64_t replies, core::GapReason reason) noexcept;
  /// Publishes a partly filled block (when the driver stops). Returns the samples published.
  std::uint64_t flush() noexcept;

  [[nodiscard]] std::uint64_t gap_blocks() const noexcept { return gap_blocks_; }

 private:
  core::ChannelWriter writer_;
  std::vector<double> block_;  // the next block's samples (capacity: the block size, reserved once)
  std::uint64_t block_realtime_ns_ = 0;
  std::uint64_t gap_blocks_ = 0;
};

}  // namespace weir::acq::detail

#pragma once
// The channels a replay writes: checked against the arena, created when missing, and fed block by
// block (a Lane per channel). Private to the replay driver.
#include <cstdint>
#include <vector>

#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/error.hpp"
#include "weir/replay/recording.hpp"
#include "weir/replay/replay.hpp"

namespace weir::acq::detail {

/// One channel being replayed: its writer, its samples' reader and its counters.
class Lane {
 public:
  Lane(const Recording& recording, const RecordedChannel& channel, core::ChannelWriter writer, bool created);

  /// Publishes recorded block `block` (after the gap before it, if any), with its realtime stamp
  /// shifted by realtime_shift_ns and the given monotonic stamp (0: now); a block recorded as a gap
  /// (core::kBlockGapFlag) is published as one again, with its reason. Fails only on a file read.
  [[nodiscard]] core::Result<void> publish(std::uint64_t block, std::uint64_t realtime_shift_ns,
                                           std::uint64_t monotonic_ns, std::uint64_t read_bytes);
  /// Publishes the gap the recording ended in, if any: the end of one pass.
  void end_pass() noexcept;

  const RecordedChannel* channel;
  ReplayChannelReport report;

  /// Part of the blocks the recording lost at one place, all of one reason.
  struct GapPiece {
    std::uint64_t before = 0;  // the recorded block they precede; blocks.size(): after the last
    std::uint64_t blocks = 0;
    core::GapReason reason = core::GapReason::source_loss;
  };

 private:
  /// Publishes the gap before recorded block `before` (blocks.size(): the recording's end), each
  /// piece with its reason.
  void gap(std::uint64_t before) noexcept;

  core::ChannelWriter writer_;
  SampleReader reader_;
  std::vector<GapPiece> pieces_;  // by `before`: every place the recording lost blocks
};

/// The pieces of every gap of a recorded channel: the blocks missing before each block and after the
/// last (RecordedBlock::missing_before, RecordedChannel::missing_after), each run under the reason
/// of the gap rows that cover it; source_loss where no row does (the recording lost them unexplained).
[[nodiscard]] std::vector<Lane::GapPiece> gap_pieces(const RecordedChannel& channel);

/// Checks, creates and opens the writers of the chosen channels; nothing is created when any
/// existing channel is refused. Errors name the channel, the arena and the recording.
[[nodiscard]] core::Result<std::vector<Lane>> open_lanes(const core::Arena& arena, const Recording& recording,
                                                         const std::vector<const RecordedChannel*>& chosen,
                                                         const ReplayOptions& options);

}  // namespace weir::acq::detail

#pragma once
// The file-writer's gate for one channel: reads what a Kafka receiver published into the staging
// arena and republishes into the run's arena only the blocks whose time falls in the run's window
// [start, stop), so the run's channel begins with the run's first block and the recorder's files,
// gap rows and ledger hold exactly the run (docs/design/kafka.md, "File-writer").
//
// A data block's time is its first sample's (the se00 packet_timestamp). A gap block (a missing
// message counter, for its reason) has none: it is placed one block period after the block before
// it, or, before any data block was read, one period before the block after it, and goes into the
// run as a gap block of the same reason when that time is in the window.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/error.hpp"
#include "weir/core/gap_reason.hpp"

namespace weir::kafka::fw {

/// Data times in ns since the epoch; stop is kOpenStop while no stop is known.
struct RunWindow {
  std::int64_t start_ns = 0;
  std::int64_t stop_ns = 0;
};
inline constexpr std::int64_t kOpenStop = INT64_MAX;

struct GateCounts {
  std::uint64_t copied = 0;        // data blocks into the run
  std::uint64_t gap_blocks = 0;    // gap blocks into the run
  std::uint64_t before = 0;        // data or gap blocks before the window's start
  std::uint64_t after = 0;         // data or gap blocks at or after its stop
  std::uint64_t unplaced = 0;      // gap blocks with no data block to place them by
  std::uint64_t dropped = 0;       // the run's channel refused a block (its reader full past the timeout)
};

/// One channel's gate. Thread: one thread at a time (the run's gate thread).
class RunGate {
 public:
  /// Follows `channel` of `staging` from the oldest block its ring holds (a lossless reader named
  /// `consumer`) and creates the channel of the same name and shape in `run`. Fails naming the
  /// channel. Cold path.
  [[nodiscard]] static core::Result<RunGate> open(const core::Arena& staging, const core::Arena& run,
                                                  const std::string& channel, const std::string& consumer);

  /// Moves at most one block from staging into the run. Returns false when nothing was waiting.
  /// Hot path: no allocation, no lock.
  bool step(const RunWindow& window) noexcept;

  /// The run is over: gaps still waiting for a data block to place them by are counted unplaced.
  void finish() noexcept;

  /// A block at or after the window's stop has been read: this channel's part of the run is done.
  [[nodiscard]] bool passed_stop() const noexcept { return passed_stop_; }
  [[nodiscard]] const GateCounts& counts() const noexcept { return counts_; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }

 private:
  struct PendingGap {
    std::uint64_t blocks = 0;
    core::GapReason reason = core::GapReason::source_loss;
  };
  static constexpr std::size_t kMaxPending = 8;

  RunGate(std::string name, core::ChannelReader reader, core::ChannelWriter writer, double sample_ns,
          std::vector<std::byte> bounce) noexcept;
  void on_gap(std::uint64_t blocks, core::GapReason reason, const RunWindow& window) noexcept;
  void place_gap(std::int64_t first_ns, std::uint64_t blocks, core::GapReason reason, const RunWindow& window) noexcept;
  void place_pending(std::int64_t next_ns, const RunWindow& window) noexcept;
  void copy(const core::BlockView& view, const RunWindow& window) noexcept;

  std::string name_;
  core::ChannelReader reader_;
  core::ChannelWriter writer_;
  double sample_ns_;                      // 1e9 / rate
  double block_ns_;                       // a full block's duration
  std::vector<std::byte> bounce_;         // one block, read before the run's slot is claimed
  std::optional<std::int64_t> next_ns_;   // where the next block should start: after the last one read
  std::array<PendingGap, kMaxPending> pending_{};
  std::size_t pending_count_ = 0;
  bool passed_stop_ = false;
  GateCounts counts_;
};

}  // namespace weir::kafka::fw

#pragma once
// A driver's PV log channel (core/pv_log.hpp): the queued entries moved into its blocks.
#include <cstdint>
#include <memory>
#include <vector>

#include "weir/controls/driver_settings.hpp"
#include "weir/controls/entry_queue.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/error.hpp"

namespace weir::controls {

class PvLogChannel {
 public:
  /// Opens settings.log_channel for writing; `what` names it in the error ("PV log").
  /// Thread: control only. Fails when the arena has no such channel.
  [[nodiscard]] static core::Result<PvLogChannel> open(const core::Arena& arena, const DriverSettings& settings,
                                                       const char* what);

  /// Moves queued entries into blocks: every full block at once, the rest when `all` (the flush),
  /// after the `dropped` entries of the producers' counts. A block the channel refuses (a full
  /// lossless reader past its timeout) is counted in lost(). No allocation. Thread: the consumer.
  void flush(EntryQueue& queue, bool all) noexcept;

  [[nodiscard]] std::uint64_t blocks() const noexcept { return blocks_; }
  [[nodiscard]] std::uint64_t lost() const noexcept { return lost_; }

 private:
  PvLogChannel(std::unique_ptr<core::ChannelWriter> writer, std::uint32_t per_block);

  std::unique_ptr<core::ChannelWriter> writer_;
  std::uint32_t per_block_;
  std::vector<std::byte> discard_;  // one block: where refused entries go
  std::uint64_t blocks_ = 0, lost_ = 0;
};

}  // namespace weir::controls

#pragma once
// A driver's PV log channel (core/pv_log.hpp): the queued entries moved into its blocks.
#include <cstdint>
#include <memory>
#include <vector>

#include "weir/controls/driver_settings.hpp"
#include "weir/controls/entry_queue.hpp"
#include "weir/controls/frame_writer.hpp"
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

/// A driver's channels made when missing (weir run makes them before its drivers start; a driver run
/// alone makes them here): its PV log and each item's frame channel (`frame`: "waveform", "spectrum");
/// then its PV log opened (`what` as for PvLogChannel::open). `items`: the driver's PvSpec or
/// AttributeSpec list. Thread: control only.
template <class Items>
[[nodiscard]] core::Result<PvLogChannel> open_driver_channels(const core::Arena& arena, const DriverSettings& settings,
                                                              const Items& items, const char* frame, const char* what) {
  make_missing_channel(arena, pv_log_channel_spec(settings));
  for (const FrameSettings& item : items)
    if (!item.channel.empty()) make_missing_channel(arena, frame_channel_spec(item, frame));
  return PvLogChannel::open(arena, settings, what);
}

}  // namespace weir::controls

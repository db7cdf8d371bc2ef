#include "weir/controls/pv_log_channel.hpp"

#include <fmt/format.h>

#include "weir/controls/frame_writer.hpp"

namespace weir::controls {

core::Result<PvLogChannel> PvLogChannel::open(const core::Arena& arena, const DriverSettings& settings, const char* what) {
  auto log = core::ChannelWriter::open(arena, settings.log_channel);
  if (!log)
    return core::fail(log.error().code, fmt::format("driver \"{}\": {} channel '{}': {}", settings.part, what,
                                                    settings.log_channel, log.error().what));
  return PvLogChannel(std::make_unique<core::ChannelWriter>(std::move(*log)), settings.log_block);
}

PvLogChannel::PvLogChannel(std::unique_ptr<core::ChannelWriter> writer, std::uint32_t per_block)
    : writer_(std::move(writer)), per_block_(per_block), discard_(std::size_t{per_block} * sizeof(core::PvLogEntry)) {}

void PvLogChannel::flush(EntryQueue& queue, bool all) noexcept {
  queue.queue_dropped(realtime_ns());
  while (queue.size() >= per_block_ || (all && queue.size() > 0)) {
    std::span<std::byte> out;
    if (writer_->claim(out) != core::ClaimStatus::ok) {  // counted at source by the channel too
      lost_ += queue.pop(discard_.data(), per_block_);
      continue;
    }
    const std::uint32_t n = queue.pop(out.data(), per_block_);
    writer_->publish(n * core::kPvLogEntryBytes, static_cast<std::uint64_t>(realtime_ns()));
    ++blocks_;
  }
}

}  // namespace weir::controls

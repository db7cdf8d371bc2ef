// Unregistered block copies: the reader's claim/commit check of ChannelReader::next, without a
// cursor. A block is good when its state is block_committed_state(seq) before and after the copy.
#include "weir/core/block_copier.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>

#include "channel_access.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/detail/seqlock.hpp"

namespace weir::core {

const char* block_status_name(BlockStatus status) noexcept {
  switch (status) {
    case BlockStatus::ok: return "ok";
    case BlockStatus::overwritten: return "overwritten";
    case BlockStatus::unwritten: return "unwritten";
    case BlockStatus::too_small: return "too_small";
  }
  return "unknown";
}

BlockCopier::BlockCopier(const Arena& arena, const ChannelDesc& desc) noexcept
    : desc_(&desc), ring_(arena.base() + desc.ring_offset) {}

Result<BlockCopier> BlockCopier::open(const Arena& arena, std::uint32_t channel) {
  if (channel >= arena.geometry().channel_capacity)
    return fail(Errc::not_found, "channel " + std::to_string(channel) + ": no such channel in " +
                                     arena.location().describe());
  const ChannelDesc& d = *detail::channel_desc(arena, channel);
  const std::string name(d.name, strnlen(d.name, sizeof(d.name)));
  if (static_cast<ChannelState>(d.state.load(std::memory_order_acquire)) != ChannelState::ready)  // pairs with create
    return fail(Errc::not_found, "channel " + std::to_string(channel) + ": not a ready channel in " +
                                     arena.location().describe());
  const std::uint64_t payload = std::uint64_t{d.samples_per_block} * d.sample_bytes;
  const bool fits = d.sample_bytes == dtype_bytes(d.dtype) && d.sample_bytes > 0 &&
                    d.block_stride >= sizeof(BlockHeader) + payload && d.ring_blocks > 0 &&
                    std::has_single_bit(d.ring_blocks) &&
                    d.ring_offset + std::uint64_t{d.ring_blocks} * d.block_stride <= arena.bytes();
  if (!fits) return fail(Errc::layout_mismatch, "channel '" + name + "': the channel descriptor is inconsistent");
  return BlockCopier(arena, d);
}

Result<BlockCopier> BlockCopier::open(const Arena& arena, std::string_view name) {
  auto index = find_channel(arena, name);
  if (!index) return tl::make_unexpected(index.error());
  return open(arena, *index);
}

BlockStatus BlockCopier::copy(std::uint64_t sequence, std::span<std::byte> dst, BlockRecord& out) const noexcept {
  out = BlockRecord{};
  out.sequence = sequence;
  if (dst.size() < block_bytes()) {
    out.status = BlockStatus::too_small;
    return out.status;
  }
  return copy_one(sequence, dst.data(), out);
}

BlockStatus BlockCopier::peek(std::uint64_t sequence, BlockRecord& out) const noexcept {
  out = BlockRecord{};
  out.sequence = sequence;
  return copy_one(sequence, nullptr, out);
}

BlockRange BlockCopier::copy_range(std::uint64_t first, std::uint64_t end, std::span<std::byte> dst,
                                   std::span<BlockRecord> records) const noexcept {
  BlockRange r;
  const std::uint64_t full = block_bytes();
  for (std::uint64_t s = first; s < end && r.visited < records.size() && r.bytes + full <= dst.size(); ++s) {
    BlockRecord& rec = records[r.visited++];
    rec = BlockRecord{};
    rec.sequence = s;
    rec.offset_bytes = r.bytes;
    switch (copy_one(s, dst.data() + r.bytes, rec)) {
      case BlockStatus::ok:
        ++r.copied;
        r.bytes += std::uint64_t{rec.samples} * desc_->sample_bytes;
        break;
      case BlockStatus::overwritten: ++r.overwritten; break;
      case BlockStatus::unwritten: ++r.unwritten; break;
      case BlockStatus::too_small: break;  // not from copy_one
    }
  }
  return r;
}

BlockStatus BlockCopier::copy_one(std::uint64_t s, std::byte* dst, BlockRecord& out) const noexcept {
  const std::byte* const slot = ring_ + (s & (desc_->ring_blocks - 1)) * desc_->block_stride;
  const auto& b = *reinterpret_cast<const BlockHeader*>(slot);
  const std::uint64_t state = b.state.load(std::memory_order_acquire);  // pairs with the commit store
  if (state != block_committed_state(s)) {  // states only grow: past block s's own writing state is a later block
    out.status = state > block_writing_state(s) ? BlockStatus::overwritten : BlockStatus::unwritten;
    return out.status;
  }
  const std::uint32_t samples = std::min(b.samples.load(std::memory_order_relaxed), desc_->samples_per_block);
  out.flags = b.flags.load(std::memory_order_relaxed);
  out.realtime_ns = b.realtime_ns.load(std::memory_order_relaxed);
  out.monotonic_ns = b.monotonic_ns.load(std::memory_order_relaxed);
  out.first_sample = b.first_sample.load(std::memory_order_relaxed);
  if (dst != nullptr) detail::seqlock_copy_out(dst, slot + sizeof(BlockHeader), std::uint64_t{samples} * desc_->sample_bytes);
  std::atomic_thread_fence(std::memory_order_acquire);  // the copy happens before the re-check
  if (b.state.load(std::memory_order_relaxed) != state) {
    out = BlockRecord{out.sequence, out.offset_bytes};
    out.status = BlockStatus::overwritten;
    return out.status;
  }
  out.samples = samples;
  out.status = BlockStatus::ok;
  return out.status;
}

}  // namespace weir::core

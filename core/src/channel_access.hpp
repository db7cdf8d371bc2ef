#pragma once
// Where a channel's pieces live in the mapping. Private to core.
#include <cstdint>

#include "weir/core/arena.hpp"
#include "weir/core/arena_layout.hpp"

namespace weir::core::detail {

inline ChannelDesc* channel_desc(const Arena& arena, std::uint32_t index) noexcept {
  return reinterpret_cast<ChannelDesc*>(arena.region(Region::channels)) + index;
}
inline std::byte* channel_pool(const Arena& arena) noexcept {
  return arena.region(Region::channels) + std::uint64_t{arena.geometry().channel_capacity} * sizeof(ChannelDesc);
}
inline ConsumerRow* consumer_rows(const Arena& arena) noexcept {
  return reinterpret_cast<ConsumerRow*>(arena.region(Region::consumers));
}
inline BlockHeader* block_at(const Arena& arena, const ChannelDesc& d, std::uint64_t seq) noexcept {
  return reinterpret_cast<BlockHeader*>(arena.base() + d.ring_offset + (seq & (d.ring_blocks - 1)) * d.block_stride);
}
inline PyramidEntry* pyramid_entry(const Arena& arena, const ChannelDesc& d, std::uint32_t level,
                                   std::uint64_t entry) noexcept {
  return reinterpret_cast<PyramidEntry*>(arena.base() + d.pyramid_offset) +
         std::uint64_t{level} * d.pyramid_entries + (entry & (d.pyramid_entries - 1));
}
/// Samples one level-`level` pyramid entry covers: factor^(level+1).
inline std::uint64_t pyramid_span(const ChannelDesc& d, std::uint32_t level) noexcept {
  std::uint64_t span = d.pyramid_factor;
  for (std::uint32_t l = 0; l < level; ++l) span *= d.pyramid_factor;
  return span;
}
/// Retires an active consumer row (its process closed it, died, or the row is being reused): the
/// row stops counting for its channel's writer. Thread: any; exactly one caller wins the row.
inline void retire_consumer(const Arena& arena, ConsumerRow& row) noexcept {
  std::uint32_t active = 1;
  if (!row.active.compare_exchange_strong(active, 0, std::memory_order_acq_rel)) return;
  if (static_cast<ConsumerPolicy>(row.policy.load(std::memory_order_relaxed)) == ConsumerPolicy::lossless)
    channel_desc(arena, row.channel.load(std::memory_order_relaxed))->lossless_readers.fetch_sub(1, std::memory_order_acq_rel);
}

}  // namespace weir::core::detail

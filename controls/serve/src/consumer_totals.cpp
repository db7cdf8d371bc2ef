// Consumer rows summed per served channel (consumer_totals.hpp).
#include "weir/controls/consumer_totals.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string_view>

#include "weir/core/arena_layout.hpp"

namespace weir::controls {

namespace {

constexpr std::string_view kRecorderKind = "record";  // consumer rows of recorders ("record:hdf5")

}  // namespace

void sum_consumers(const core::Arena& arena, std::span<const int> row_of_channel, std::span<ChannelTotals> totals) {
  for (ChannelTotals& t : totals) t.lost = t.lag = 0;
  const auto* rows = reinterpret_cast<const core::ConsumerRow*>(arena.region(core::Region::consumers));
  for (std::uint32_t r = 0; r < arena.geometry().consumer_capacity; ++r) {
    const core::ConsumerRow& row = rows[r];
    if (row.active.load(std::memory_order_acquire) == 0) continue;  // pairs with the row's registration
    const std::uint32_t ch = row.channel.load(std::memory_order_relaxed);  // relaxed: counters to display
    if (ch >= row_of_channel.size() || row_of_channel[ch] < 0) continue;
    ChannelTotals& t = totals[static_cast<std::size_t>(row_of_channel[ch])];
    t.lost += row.blocks_lost.load(std::memory_order_relaxed);
    const std::string_view kind(row.kind, strnlen(row.kind, sizeof row.kind));
    if (kind.substr(0, kRecorderKind.size()) == kRecorderKind) {
      const std::uint64_t cursor = row.cursor.load(std::memory_order_relaxed);
      t.lag = std::max(t.lag, t.head > cursor ? t.head - cursor : 0);
    }
  }
}

std::uint64_t recorder_blocks_out(const core::Arena& arena) {
  std::uint64_t sum = 0;
  const auto* rows = reinterpret_cast<const core::ConsumerRow*>(arena.region(core::Region::consumers));
  for (std::uint32_t r = 0; r < arena.geometry().consumer_capacity; ++r) {
    const core::ConsumerRow& row = rows[r];
    if (row.active.load(std::memory_order_acquire) == 0) continue;  // pairs with the row's registration
    const std::string_view kind(row.kind, strnlen(row.kind, sizeof row.kind));
    if (kind.substr(0, kRecorderKind.size()) == kRecorderKind)
      sum += row.blocks_out.load(std::memory_order_relaxed);  // relaxed: a counter to display
  }
  return sum;
}

}  // namespace weir::controls

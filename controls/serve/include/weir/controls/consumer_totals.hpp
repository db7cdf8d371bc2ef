#pragma once
// What the arena's consumer rows say of each served channel, for a server's status (epics "serve",
// tango "serve"): blocks its readers lost, and how many blocks the slowest recorder is behind.
#include <cstdint>
#include <span>

#include "weir/core/arena.hpp"

namespace weir::controls {

/// One served channel's totals; `head` is set by the caller (its writer's head) before the sum.
struct ChannelTotals {
  std::uint64_t head = 0;
  std::uint64_t lost = 0;  // blocks lost, summed over its consumer rows
  std::uint64_t lag = 0;   // blocks not yet read by its slowest recorder ("record..." rows)
};

/// Sums the active consumer rows into `totals`: `row_of_channel[c]` is channel c's entry in `totals`
/// (-1: not served). Thread: any; reads counters relaxed (they are for display).
void sum_consumers(const core::Arena& arena, std::span<const int> row_of_channel, std::span<ChannelTotals> totals);

}  // namespace weir::controls

namespace weir::controls {

/// Blocks written so far by the arena's recorders ("record..." consumer rows): the sum of their
/// blocks_out. A server's NumCaptured is this less what it was when the run began. Thread: any.
[[nodiscard]] std::uint64_t recorder_blocks_out(const core::Arena& arena);

}  // namespace weir::controls

#pragma once
// How fast a channel is really being written, and how old its newest block is, from one look at the
// channel's own block timestamps: no second sample of a counter a second later, so `weir ls`, the web
// API and /metrics give the true rate at their first call, and a stalled writer shows at once.
#include <cstdint>

#include "weir/core/block_copier.hpp"

namespace weir::core {

/// One look at a channel's recent blocks. Rates are over the window of blocks (oldest .. newest]
/// by their CLOCK_MONOTONIC stamps; when the writer has stalled (the newest block overdue by more than
/// two of its block periods and 250 ms of scheduling slack) the window runs on to now, so the rate
/// decays while it stalls.
struct ChannelActivity {
  bool known = false;                     // a data block was read; the rest is zero otherwise
  std::uint64_t newest_sequence = 0;
  std::uint64_t newest_realtime_ns = 0;   // the newest block's acquisition time, ns since the epoch
  std::uint64_t newest_monotonic_ns = 0;  // ... and by CLOCK_MONOTONIC
  double age_s = 0;                       // now minus the newest block's monotonic stamp (>= 0)
  double blocks_per_s = 0;                // 0 until two blocks with distinct stamps exist
  double samples_per_s = 0;
  std::uint64_t window_blocks = 0;        // blocks the rates were measured over
  double window_s = 0;                    // seconds they were measured over
};

inline constexpr std::uint32_t kActivityWindowBlocks = 64;

/// Reads the newest data block's and an older data block's metadata (never samples); gap blocks carry
/// no acquisition time and are passed over. Both lie within the newest half of the ring (so the
/// writer cannot lap them while they are read), the older at most max_blocks before the newer.
/// Thread: any. Allocates nothing.
[[nodiscard]] ChannelActivity channel_activity(const BlockCopier& copier, std::int64_t now_monotonic_ns,
                                               std::uint32_t max_blocks = kActivityWindowBlocks) noexcept;
/// As above, now = monotonic_ns().
[[nodiscard]] ChannelActivity channel_activity(const BlockCopier& copier,
                                               std::uint32_t max_blocks = kActivityWindowBlocks) noexcept;

}  // namespace weir::core

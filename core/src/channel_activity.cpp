#include "weir/core/channel_activity.hpp"

#include <algorithm>

#include "weir/core/clock.hpp"

namespace weir::core {

namespace {

// A block is stamped at its first sample and published about one period later; the writer has
// stalled when the newest block is older than that by more than two periods and a scheduling slack.
constexpr double kLateAfterPeriods = 2.0;
constexpr double kSchedulingSlackS = 0.25;

// A committed block with samples: gap blocks (skip()) carry no acquisition time.
bool data_block(const BlockCopier& c, std::uint64_t sequence, BlockRecord& out) noexcept {
  return c.peek(sequence, out) == BlockStatus::ok && (out.flags & kBlockGapFlag) == 0;
}

}  // namespace

ChannelActivity channel_activity(const BlockCopier& copier, std::int64_t now_monotonic_ns,
                                 std::uint32_t max_blocks) noexcept {
  ChannelActivity a;
  const std::uint64_t head = copier.head();
  const std::uint64_t half_ring = std::max<std::uint64_t>(copier.ring_blocks() / 2, 1);
  BlockRecord newest;
  std::uint64_t back_from_head = 0;  // the newest data block, within half the ring
  while (back_from_head < std::min(head, half_ring) && !data_block(copier, head - 1 - back_from_head, newest))
    ++back_from_head;
  if (back_from_head >= std::min(head, half_ring)) return a;
  a.known = true;
  a.newest_sequence = newest.sequence;
  a.newest_realtime_ns = newest.realtime_ns;
  a.newest_monotonic_ns = newest.monotonic_ns;
  const auto now = static_cast<std::uint64_t>(std::max<std::int64_t>(now_monotonic_ns, 0));
  a.age_s = now > newest.monotonic_ns ? static_cast<double>(now - newest.monotonic_ns) / kNsPerSecond : 0.0;

  const std::uint64_t back = std::min<std::uint64_t>({max_blocks, newest.sequence, half_ring - back_from_head});
  BlockRecord oldest;
  std::uint64_t k = back;
  for (; k > 0; --k)  // a gap, or lapped by the writer after all: step towards the newest
    if (data_block(copier, newest.sequence - k, oldest)) break;
  if (k == 0 || newest.monotonic_ns <= oldest.monotonic_ns) return a;
  const double span_s = static_cast<double>(newest.monotonic_ns - oldest.monotonic_ns) / kNsPerSecond;
  const double period_s = span_s / static_cast<double>(k);
  const double overdue_s = a.age_s - period_s;  // past the expected publication of the newest block
  const double late_s = overdue_s > std::max(kLateAfterPeriods * period_s, kSchedulingSlackS) ? overdue_s : 0.0;
  a.window_blocks = k;
  a.window_s = span_s + late_s;
  a.blocks_per_s = static_cast<double>(k) / a.window_s;
  const std::uint64_t samples = newest.first_sample > oldest.first_sample ? newest.first_sample - oldest.first_sample : 0;
  a.samples_per_s = static_cast<double>(samples) / a.window_s;
  return a;
}

ChannelActivity channel_activity(const BlockCopier& copier, std::uint32_t max_blocks) noexcept {
  return channel_activity(copier, monotonic_ns(), max_blocks);
}

}  // namespace weir::core

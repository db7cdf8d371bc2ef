#include "weir/core/channel_activity.hpp"

#include <algorithm>

#include "weir/core/clock.hpp"

namespace weir::core {

namespace {

constexpr std::uint64_t kNewestTries = 4;  // blocks back from the head tried for the newest committed one
constexpr double kLateAfterPeriods = 2.0;  // a writer this many block periods late has stalled

// The newest committed block among start, start - 1, ... (tries of them); false if none is readable.
bool newest_ok(const BlockCopier& c, std::uint64_t start, std::uint64_t tries, BlockRecord& out) noexcept {
  for (std::uint64_t i = 0; i < tries && i <= start; ++i)
    if (c.peek(start - i, out) == BlockStatus::ok) return true;
  return false;
}

}  // namespace

ChannelActivity channel_activity(const BlockCopier& copier, std::int64_t now_monotonic_ns,
                                 std::uint32_t max_blocks) noexcept {
  ChannelActivity a;
  const std::uint64_t head = copier.head();
  if (head == 0) return a;
  BlockRecord newest;
  if (!newest_ok(copier, head - 1, kNewestTries, newest)) return a;
  a.known = true;
  a.newest_sequence = newest.sequence;
  a.newest_realtime_ns = newest.realtime_ns;
  a.newest_monotonic_ns = newest.monotonic_ns;
  const auto now = static_cast<std::uint64_t>(std::max<std::int64_t>(now_monotonic_ns, 0));
  a.age_s = now > newest.monotonic_ns ? static_cast<double>(now - newest.monotonic_ns) / kNsPerSecond : 0.0;

  const std::uint64_t back =
      std::min<std::uint64_t>({max_blocks, newest.sequence, std::max<std::uint64_t>(copier.ring_blocks() / 2, 1)});
  BlockRecord oldest;
  std::uint64_t k = back;
  for (; k > 0; --k)  // the writer may have lapped it after all: step towards the newest
    if (copier.peek(newest.sequence - k, oldest) == BlockStatus::ok) break;
  if (k == 0 || newest.monotonic_ns <= oldest.monotonic_ns) return a;
  const double span_s = static_cast<double>(newest.monotonic_ns - oldest.monotonic_ns) / kNsPerSecond;
  const double period_s = span_s / static_cast<double>(k);
  const double late_s = a.age_s > kLateAfterPeriods * period_s ? a.age_s : 0.0;
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

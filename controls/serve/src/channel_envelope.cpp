// A channel's envelope in buckets, from its pyramid (channel_envelope.hpp).
#include "weir/controls/channel_envelope.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include "weir/core/channel.hpp"

namespace weir::controls {

ChannelEnvelope::ChannelEnvelope(const core::ChannelDesc& desc, std::uint32_t channel, std::uint32_t buckets)
    : desc_(&desc), channel_(channel), buckets_(std::max<std::uint32_t>(buckets, 1)) {
  const core::ChannelDesc& d = desc;
  const double bucket = static_cast<double>(std::uint64_t{d.ring_blocks} * d.samples_per_block) / buckets_;
  std::uint64_t width = std::max<std::uint32_t>(d.pyramid_factor, 1);
  for (std::uint32_t level = 1; level < d.pyramid_levels && static_cast<double>(width * d.pyramid_factor) <= bucket; ++level)
    width *= d.pyramid_factor;
  entry_samples_ = width;
  // A level keeps pyramid_entries entries, less those of the block the writer may be overwriting.
  const std::uint64_t busy = (d.samples_per_block + width - 1) / width + 2;
  const std::uint64_t reach = d.pyramid_entries > busy ? d.pyramid_entries - busy : 1;
  span_entries_ = std::clamp<std::uint64_t>(std::uint64_t{d.ring_blocks} * d.samples_per_block / width, 1, reach);
  lo_.assign(span_entries_, 0.0F);
  hi_.assign(span_entries_, 0.0F);
}

std::size_t ChannelEnvelope::read(const core::Arena& arena) {
  const std::uint64_t written = desc_->samples_written.load(std::memory_order_acquire);  // pairs with the writer's publish
  const std::uint64_t end = written / entry_samples_ * entry_samples_;
  const std::uint64_t span = span_entries_ * entry_samples_;
  const std::uint64_t first = end > span ? end - span : 0;
  entries_ = static_cast<std::size_t>((end - first) / entry_samples_);
  if (entries_ == 0) return 0;
  core::envelope(arena, channel_, first, end - first, std::span<float>(lo_.data(), entries_),
                 std::span<float>(hi_.data(), entries_));
  return entries_;
}

std::size_t ChannelEnvelope::fold(bool minima, std::span<double> out) const {
  const std::size_t n = entries_;
  const std::size_t buckets = std::min<std::size_t>({buckets_, n, out.size()});
  if (buckets == 0) return 0;
  const std::vector<float>& src = minima ? lo_ : hi_;
  std::fill_n(out.begin(), buckets, std::numeric_limits<double>::quiet_NaN());
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isnan(src[i])) continue;  // an entry the writer overtook, or a gap
    double& b = out[i * buckets / n];
    const auto x = static_cast<double>(src[i]);
    b = std::isnan(b) ? x : minima ? std::min(b, x) : std::max(b, x);
  }
  return buckets;
}

}  // namespace weir::controls

#include "weir/dsp/sample_clock.hpp"

#include <algorithm>
#include <cmath>

namespace weir::dsp {

SampleClock::SampleClock(std::size_t blocks, double rate_hz) : ring_(std::max<std::size_t>(blocks, 1)), rate_hz_(rate_hz) {}

void SampleClock::add(const weir_shard_block& in) noexcept {
  if (in.count == 0) return;
  ring_[head_] = Stamp{in.first_sample, in.realtime_ns, in.count};
  head_ = (head_ + 1) % ring_.size();
  count_ = std::min(count_ + 1, ring_.size());
}

std::uint64_t SampleClock::offset_time(std::uint64_t block_realtime_ns, double offset, double rate_hz) noexcept {
  const auto shift = std::llround(offset * 1e9 / rate_hz);
  return static_cast<std::uint64_t>(static_cast<std::int64_t>(block_realtime_ns) + shift);
}

std::uint64_t SampleClock::realtime_of(std::uint64_t index) const noexcept {
  if (count_ == 0) return 0;
  // Newest first: a window's first sample is usually a few blocks back at most.
  const Stamp* found = nullptr;
  for (std::size_t k = 1; k <= count_; ++k) {
    const Stamp& s = ring_[(head_ + ring_.size() - k) % ring_.size()];
    found = &s;
    if (index >= s.first_sample) break;
  }
  const double offset = index >= found->first_sample ? static_cast<double>(index - found->first_sample)
                                                     : -static_cast<double>(found->first_sample - index);
  return offset_time(found->realtime_ns, offset, rate_hz_);
}

}  // namespace weir::dsp

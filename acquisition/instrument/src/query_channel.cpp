#include "query_channel.hpp"

#include <cstring>
#include <span>
#include <utility>

namespace weir::acq::detail {

QueryChannel::QueryChannel(core::ChannelWriter writer) : writer_(std::move(writer)) {
  block_.reserve(writer_.samples_per_block());
}

std::uint64_t QueryChannel::push(double value, std::uint64_t realtime_ns) noexcept {
  if (block_.empty()) block_realtime_ns_ = realtime_ns;
  block_.push_back(value);  // within the capacity reserved for one block
  return block_.size() < writer_.samples_per_block() ? 0 : flush();
}

std::uint64_t QueryChannel::miss(std::uint64_t replies, core::GapReason reason) noexcept {
  const std::uint64_t closed = flush();
  writer_.skip(replies, reason);
  gap_blocks_ += replies;
  return closed;
}

std::uint64_t QueryChannel::flush() noexcept {
  if (block_.empty()) return 0;
  std::uint64_t published = 0;
  std::span<std::byte> slot;
  switch (writer_.claim(slot)) {
    case core::ClaimStatus::ok:
      if (writer_.desc().dtype == core::Dtype::f64) {
        std::memcpy(slot.data(), block_.data(), block_.size() * sizeof(double));
      } else {
        for (std::size_t i = 0; i < block_.size(); ++i) {
          const auto f = static_cast<float>(block_[i]);
          std::memcpy(slot.data() + i * sizeof f, &f, sizeof f);
        }
      }
      writer_.publish(static_cast<std::uint32_t>(block_.size()), block_realtime_ns_);
      published = block_.size();
      break;
    case core::ClaimStatus::dropped: break;  // counted by the channel as dropped at the source
  }
  block_.clear();
  return published;
}

}  // namespace weir::acq::detail

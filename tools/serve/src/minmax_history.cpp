#include "minmax_history.hpp"

#include <algorithm>
#include <bit>

namespace weir::serve {

MinMaxHistory::MinMaxHistory(std::uint32_t factor, std::size_t capacity)
    : factor_(factor), lo_(std::bit_ceil(std::max<std::size_t>(capacity, 1))), hi_(lo_.size()), mask_(lo_.size() - 1) {}

void MinMaxHistory::reset() noexcept {
  running_ = false;
  begin_entry_ = end_entry_ = 0;
  acc_lo_ = std::numeric_limits<float>::infinity();
  acc_hi_ = -std::numeric_limits<float>::infinity();
}

void MinMaxHistory::append(std::uint64_t first, std::span<const float> values) noexcept {
  if (values.empty()) return;
  if (!running_ || first != next_sample_) {
    reset();
    running_ = true;
    begin_entry_ = end_entry_ = (first + factor_ - 1) / factor_;  // the first entry begun at its start
  }
  const std::uint64_t skip_to = begin_entry_ * factor_;  // samples before the first whole entry are not kept
  std::uint64_t s = first;
  for (const float v : values) {
    if (s++ < skip_to) continue;
    acc_lo_ = std::min(acc_lo_, v);
    acc_hi_ = std::max(acc_hi_, v);
    if (s % factor_ != 0) continue;
    lo_[end_entry_ & mask_] = acc_lo_;
    hi_[end_entry_ & mask_] = acc_hi_;
    ++end_entry_;
    if (end_entry_ - begin_entry_ > lo_.size()) ++begin_entry_;
    acc_lo_ = std::numeric_limits<float>::infinity();
    acc_hi_ = -std::numeric_limits<float>::infinity();
  }
  next_sample_ = s;
}

}  // namespace weir::serve

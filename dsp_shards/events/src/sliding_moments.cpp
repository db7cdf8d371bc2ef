#include "weir/dsp/sliding_moments.hpp"

#include <string>

namespace weir::dsp {

core::Result<SlidingMoments> SlidingMoments::create(std::uint32_t window_blocks) {
  if (window_blocks == 0 || window_blocks > kMaxWindowBlocks)
    return core::fail(core::Errc::invalid_argument, "sliding window of " + std::to_string(window_blocks) +
                                                        " blocks: allowed 1 to " + std::to_string(kMaxWindowBlocks));
  return SlidingMoments(window_blocks);
}

SlidingMoments::SlidingMoments(std::uint32_t window_blocks)
    : capacity_(window_blocks), front_(window_blocks), back_(window_blocks) {}

void SlidingMoments::push(const Moments& block) noexcept {
  if (blocks() == capacity_) pop_oldest();
  back_[back_size_++] = block;
  back_total_ = merge(back_total_, block);
}

void SlidingMoments::pop_oldest() noexcept {
  if (front_begin_ == front_end_) {
    // Flip: every back element moves to the front once, so the O(window) work here is paid for by
    // the window's worth of O(1) pushes that filled the back.
    Moments suffix;
    for (std::uint32_t i = back_size_; i-- > 0;) {
      suffix = merge(back_[i], suffix);
      front_[i] = suffix;
    }
    front_begin_ = 0;
    front_end_ = back_size_;
    back_size_ = 0;
    back_total_ = Moments{};
  }
  ++front_begin_;
}

Moments SlidingMoments::value() const noexcept {
  const Moments older = front_begin_ < front_end_ ? front_[front_begin_] : Moments{};
  return merge(older, back_total_);
}

void SlidingMoments::clear() noexcept {
  front_begin_ = front_end_ = 0;
  back_size_ = 0;
  back_total_ = Moments{};
}

}  // namespace weir::dsp

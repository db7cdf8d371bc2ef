#pragma once
// The floor a channel writer's cost is measured against: a minimal one-writer, many-reader ring of
// fixed-size blocks in one shared mapping, each slot guarded by a sequence word, so lossy readers
// can follow it and detect what was overwritten (no headers, counters, pyramid, signal groups or
// consumer table). Private to bench/.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>

#include "bare_seqlock.hpp"

namespace weir::bench {

/// slots (a power of two) blocks of block_bytes (a multiple of 64), each behind its own line with
/// the slot's sequence word: 2n+1 while block n is written, 2n+2 once it is in.
/// Thread: the writer calls claim/publish in one thread of one process; each reader next/done in
/// one thread of its own process (the cursor is the object's; processes forked after construction).
class BroadcastRing {
 public:
  BroadcastRing(std::uint32_t slots, std::size_t block_bytes) noexcept
      : map_(kLine + std::size_t{slots} * (kLine + block_bytes)), block_bytes_(block_bytes), mask_(slots - 1) {
    if (!map_.valid()) return;
    head_word_ = new (map_.data()) std::atomic<std::uint64_t>{0};
    for (std::uint64_t n = 0; n <= mask_; ++n) new (slot(n)) std::atomic<std::uint64_t>{0};
  }
  BroadcastRing(const BroadcastRing&) = delete;
  BroadcastRing& operator=(const BroadcastRing&) = delete;

  [[nodiscard]] bool valid() const noexcept { return head_word_ != nullptr; }

  /// Writer: the next block, marked as being written. Never waits: readers that fall behind lose.
  [[nodiscard]] std::byte* claim() noexcept {
    seq(head_).store(2 * head_ + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);  // "being written" before the new bytes
    return payload(head_);
  }
  /// Writer: the claimed block is in; the head moves past it.
  void publish() noexcept {
    seq(head_).store(2 * head_ + 2, std::memory_order_release);
    head_word_->store(++head_, std::memory_order_release);
  }

  /// Reader: the next block to read, or nullptr with `lost` the blocks overwritten before this
  /// reader got to them (0: nothing new yet).
  [[nodiscard]] const std::byte* next(std::uint64_t& lost) noexcept {
    lost = 0;
    const std::uint64_t head = head_word_->load(std::memory_order_acquire);
    if (cursor_ == head) return nullptr;
    if (head - cursor_ > mask_ + 1) {  // lapped: only the last `slots` blocks can still be there
      lost = head - (mask_ + 1) - cursor_;
      cursor_ += lost;
      return nullptr;
    }
    if (seq(cursor_).load(std::memory_order_acquire) != 2 * cursor_ + 2) {  // overwritten since head was read
      lost = 1;
      ++cursor_;
      return nullptr;
    }
    return payload(cursor_);
  }
  /// Reader: whether the block next() gave was intact all the while it was used; moves past it.
  [[nodiscard]] bool done() noexcept {
    std::atomic_thread_fence(std::memory_order_acquire);  // our reads of the block before the re-check
    const bool intact = seq(cursor_).load(std::memory_order_relaxed) == 2 * cursor_ + 2;
    ++cursor_;
    return intact;
  }

 private:
  static constexpr std::size_t kLine = 64;

  [[nodiscard]] std::byte* slot(std::uint64_t n) const noexcept {
    return map_.data() + kLine + (n & mask_) * (kLine + block_bytes_);
  }
  [[nodiscard]] std::atomic<std::uint64_t>& seq(std::uint64_t n) const noexcept {
    return *std::launder(reinterpret_cast<std::atomic<std::uint64_t>*>(slot(n)));
  }
  [[nodiscard]] std::byte* payload(std::uint64_t n) const noexcept { return slot(n) + kLine; }

  SharedMapping map_;
  std::atomic<std::uint64_t>* head_word_ = nullptr;  // blocks published; in the mapping's first line
  std::size_t block_bytes_;
  std::uint64_t mask_;
  std::uint64_t head_ = 0;    // the writer's own
  std::uint64_t cursor_ = 0;  // a reader's own
};

}  // namespace weir::bench

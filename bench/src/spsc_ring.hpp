#pragma once
// The floor a channel is measured against: a minimal single-producer, single-consumer ring of
// fixed-size blocks in one shared mapping, and nothing else (no headers, counters, pyramid, signal
// groups or consumer table). Private to bench/.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>

#include "bare_seqlock.hpp"

namespace weir::bench {

/// slots (a power of two) blocks of block_bytes (a multiple of 64) behind two cache-line indices.
/// Each side keeps a private copy of the other side's index and reloads it only when the ring looks
/// full (producer) or empty (consumer).
/// Thread: the producer calls claim/publish, the consumer peek/release, each in one thread of one
/// process; both processes must be forked after construction.
class SpscRing {
 public:
  SpscRing(std::uint32_t slots, std::size_t block_bytes) noexcept
      : map_(sizeof(Indices) + std::size_t{slots} * block_bytes), block_bytes_(block_bytes), mask_(slots - 1) {
    if (map_.valid()) indices_ = new (map_.data()) Indices{};
  }
  SpscRing(const SpscRing&) = delete;
  SpscRing& operator=(const SpscRing&) = delete;

  [[nodiscard]] bool valid() const noexcept { return indices_ != nullptr; }

  /// Producer: the next free block, or nullptr while the ring is full.
  [[nodiscard]] std::byte* claim() noexcept {
    if (head_ - tail_seen_ > mask_) {
      tail_seen_ = indices_->tail.load(std::memory_order_acquire);  // the consumer is done reading what it released
      if (head_ - tail_seen_ > mask_) return nullptr;
    }
    return block(head_);
  }
  /// Producer: makes the claimed block visible. Requires: claim() returned a block.
  void publish() noexcept {
    indices_->head.store(++head_, std::memory_order_release);  // the block's bytes before the index
  }

  /// Consumer: the oldest unread block, or nullptr while the ring is empty.
  [[nodiscard]] const std::byte* peek() noexcept {
    if (tail_ == head_seen_) {
      head_seen_ = indices_->head.load(std::memory_order_acquire);  // pairs with publish: the bytes are there
      if (tail_ == head_seen_) return nullptr;
    }
    return block(tail_);
  }
  /// Consumer: hands the peeked block back to the producer. Requires: peek() returned a block.
  void release() noexcept {
    indices_->tail.store(++tail_, std::memory_order_release);  // our reads of the block before its reuse
  }

 private:
  struct Indices {
    alignas(64) std::atomic<std::uint64_t> head{0};  // blocks published; written by the producer only
    alignas(64) std::atomic<std::uint64_t> tail{0};  // blocks released; written by the consumer only
  };

  [[nodiscard]] std::byte* block(std::uint64_t n) const noexcept {
    return map_.data() + sizeof(Indices) + (n & mask_) * block_bytes_;
  }

  SharedMapping map_;
  Indices* indices_ = nullptr;
  std::size_t block_bytes_;
  std::uint64_t mask_;
  std::uint64_t head_ = 0;       // producer's own
  std::uint64_t tail_seen_ = 0;  // producer's copy of tail
  std::uint64_t tail_ = 0;       // consumer's own
  std::uint64_t head_seen_ = 0;  // consumer's copy of head
};

}  // namespace weir::bench

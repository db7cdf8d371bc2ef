#pragma once
// Attribute log entries from the Tango threads (the event consumer's callback thread and one thread
// per device) to the driver's thread: a bounded ring, one consumer. The producers' mutex is never
// held by the consumer.
#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

#include "weir/core/pv_log.hpp"

namespace weir::tango {

class EntryQueue {
 public:
  explicit EntryQueue(std::uint32_t capacity) : ring_(std::bit_ceil(capacity)), mask_(ring_.size() - 1) {}
  bool push(const core::PvLogEntry& e) noexcept {
    const std::lock_guard lock(producers_);
    const std::uint64_t head = head_.load(std::memory_order_relaxed);
    if (head - tail_.load(std::memory_order_acquire) >= ring_.size()) return false;
    ring_[head & mask_] = e;
    head_.store(head + 1, std::memory_order_release);
    return true;
  }
  /// Entries waiting. Thread: the consumer.
  [[nodiscard]] std::uint64_t size() const noexcept {
    return head_.load(std::memory_order_acquire) - tail_.load(std::memory_order_relaxed);
  }
  /// Copies up to `max` entries to out (as bytes) and removes them. Thread: the consumer.
  std::uint32_t pop(std::byte* out, std::uint32_t max) noexcept {
    const std::uint64_t tail = tail_.load(std::memory_order_relaxed);
    const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(max, head_.load(std::memory_order_acquire) - tail));
    for (std::uint32_t i = 0; i < n; ++i)
      std::memcpy(out + std::size_t{i} * sizeof(core::PvLogEntry), &ring_[(tail + i) & mask_], sizeof(core::PvLogEntry));
    tail_.store(tail + n, std::memory_order_release);
    return n;
  }

 private:
  std::vector<core::PvLogEntry> ring_;
  std::uint64_t mask_;
  std::mutex producers_;
  alignas(64) std::atomic<std::uint64_t> head_{0};
  alignas(64) std::atomic<std::uint64_t> tail_{0};
};

}  // namespace weir::tango

#pragma once
// PV log entries from a control system's threads (CA's callbacks; Tango's event consumer and device
// threads) to the driver's thread: a bounded ring with one consumer, and per item a count of the
// entries a full ring dropped, so that the log says how many were lost and where (a `dropped` entry).
#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "weir/core/pv_log.hpp"

namespace weir::controls {

class EntryQueue {
 public:
  /// A ring of `capacity` entries (rounded up to a power of two) for items 0 .. items-1.
  EntryQueue(std::uint32_t capacity, std::size_t items);

  /// Queues `e`, or counts it against item e.pv when the ring is full (returns false). No allocation.
  /// Thread: any. Producers take a mutex that the consumer's pop() never takes: uncontended where the
  /// control system serialises its callbacks (CA), and an update costs tens of microseconds of the
  /// control system's own work either way (tango/README.md, "Measured").
  bool push(const core::PvLogEntry& e) noexcept {
    const std::lock_guard lock(producers_);
    const std::uint64_t head = head_.load(std::memory_order_relaxed);
    if (head - tail_.load(std::memory_order_acquire) >= ring_.size()) {  // acquire: the consumer's copy-out is done
      count_drop(e);
      return false;
    }
    ring_[head & mask_] = e;
    head_.store(head + 1, std::memory_order_release);  // release: the entry is written before the consumer sees it
    return true;
  }

  /// Queues one `dropped` entry (count, stamped `now_ns`) for each item that dropped since the last
  /// call; an item whose entry does not fit keeps its count for the next. Thread: the consumer.
  void queue_dropped(std::int64_t now_ns) noexcept;

  /// Entries dropped so far, all items. Thread: any.
  [[nodiscard]] std::uint64_t dropped() const noexcept { return dropped_total_.load(std::memory_order_relaxed); }

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
    tail_.store(tail + n, std::memory_order_release);  // release: the copies are done before producers reuse the slots
    return n;
  }

 private:
  struct Drops {
    std::atomic<std::uint32_t> count{0};  // since the last `dropped` entry
    std::atomic<std::uint8_t> type{0};    // the dropped entries' PvType
  };

  void count_drop(const core::PvLogEntry& e) noexcept {
    if (e.pv < items_) {
      drops_[e.pv].type.store(e.type, std::memory_order_relaxed);  // relaxed: read after any_dropped_'s acquire
      drops_[e.pv].count.fetch_add(1, std::memory_order_relaxed);
    }
    dropped_total_.fetch_add(1, std::memory_order_relaxed);  // relaxed: a statistic
    any_dropped_.store(true, std::memory_order_release);     // release: the counts above are visible to queue_dropped()
  }

  std::vector<core::PvLogEntry> ring_;
  std::uint64_t mask_;
  std::size_t items_;
  std::unique_ptr<Drops[]> drops_;
  std::mutex producers_;
  std::atomic<bool> any_dropped_{false};
  std::atomic<std::uint64_t> dropped_total_{0};
  alignas(64) std::atomic<std::uint64_t> head_{0};
  alignas(64) std::atomic<std::uint64_t> tail_{0};
};

}  // namespace weir::controls

// The `dropped` entries: made by the consumer from the producers' counts, so a full ring costs a
// producer one counter increment and the log still says what was lost.
#include "weir/controls/entry_queue.hpp"

namespace weir::controls {

EntryQueue::EntryQueue(std::uint32_t capacity, std::size_t items)
    : ring_(std::bit_ceil(capacity)), mask_(ring_.size() - 1), items_(items), drops_(std::make_unique<Drops[]>(items)) {}

void EntryQueue::queue_dropped(std::int64_t now_ns) noexcept {
  if (!any_dropped_.exchange(false, std::memory_order_acq_rel)) return;  // acquire: pairs with count_drop()'s release
  for (std::size_t i = 0; i < items_; ++i) {
    const std::uint32_t n = drops_[i].count.exchange(0, std::memory_order_relaxed);
    if (n == 0) continue;
    core::PvLogEntry e;
    e.time_ns = now_ns;
    e.pv = static_cast<std::uint32_t>(i);
    e.event = static_cast<std::uint8_t>(core::PvEvent::dropped);
    e.type = drops_[i].type.load(std::memory_order_relaxed);
    e.count = n;
    const std::lock_guard lock(producers_);
    const std::uint64_t head = head_.load(std::memory_order_relaxed);
    if (head - tail_.load(std::memory_order_relaxed) >= ring_.size()) {  // still full: try again next flush
      drops_[i].count.fetch_add(n, std::memory_order_relaxed);
      any_dropped_.store(true, std::memory_order_release);
      continue;
    }
    ring_[head & mask_] = e;
    head_.store(head + 1, std::memory_order_release);  // release: as in push()
  }
}

}  // namespace weir::controls

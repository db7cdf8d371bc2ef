// Waiting on held slots and recovering the slots of writers that died inside them.
#include <sched.h>
#include <unistd.h>

#include "backing.hpp"
#include "slot_ops.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/detail/seqlock.hpp"

namespace weir::core::detail {

namespace {

constexpr int kSpinsBeforeYield = 64;                       // pause-spins before yielding the CPU

void backoff(int& spins) noexcept {
  if (++spins < kSpinsBeforeYield) {
    cpu_relax();
  } else {
    sched_yield();
  }
}

// Takes over a slot whose owner is dead. The index entry is fixed so no half-inserted key remains.
bool recover(ArenaHeader& header, SlotHeader& slot, std::atomic<std::uint64_t>& index_entry,
             std::uint64_t odd_epoch) noexcept {
  std::uint64_t expected = odd_epoch;
  const std::uint64_t mine = epoch_claimed(odd_epoch & ~(kEpochUnit - 1), current_pid());
  if (!slot.epoch.compare_exchange_strong(expected, mine, std::memory_order_acquire)) return false;
  std::atomic_thread_fence(std::memory_order_release);  // still odd (now ours) before the repairs below
  std::uint64_t meta = slot.meta.load(std::memory_order_relaxed);
  const std::uint64_t entry = index_entry.load(std::memory_order_relaxed);
  const IndexState state = index_state(entry);
  const bool keep_key = state == IndexState::live && meta_live(meta);
  std::uint8_t flags = static_cast<std::uint8_t>(meta_flags(meta) | kSlotTorn);
  if (!keep_key) {
    flags = static_cast<std::uint8_t>(flags & ~kSlotLive);
    if (state == IndexState::inserting || state == IndexState::live)
      index_entry.store(make_index(IndexState::tombstone, index_tag(entry)), std::memory_order_seq_cst);
  }
  meta = make_meta(meta_value_len(meta), meta_key_len(meta), meta_type(meta), flags);
  slot.meta.store(meta, std::memory_order_relaxed);
  slot.pins.store(0, std::memory_order_relaxed);
  header.recovered_slots.fetch_add(1, std::memory_order_relaxed);  // a counter: nothing orders on it
  release_slot(slot);
  return true;
}

}  // namespace

void unpin(SlotHeader& slot) noexcept {
  std::uint32_t pins = slot.pins.load(std::memory_order_relaxed);
  while (pins != 0 && !slot.pins.compare_exchange_weak(pins, pins - 1, std::memory_order_release)) {
  }
}

bool settle_slot(ArenaHeader& header, SlotHeader& slot, std::atomic<std::uint64_t>& index_entry,
                 std::uint64_t odd_epoch, std::int64_t started_ns, std::int64_t deadline_ns, bool writable) noexcept {
  int spins = 0;
  for (;;) {
    if (slot.epoch.load(std::memory_order_acquire) != odd_epoch) return true;
    const std::int64_t now = monotonic_ns();
    if (now - started_ns >= kStuckAfterNs && writable && !pid_alive(epoch_owner(odd_epoch)) &&
        recover(header, slot, index_entry, odd_epoch))
      return true;
    if (now >= deadline_ns) return false;
    backoff(spins);
  }
}

bool claim_slot(ArenaHeader& header, SlotHeader& slot, std::atomic<std::uint64_t>& index_entry,
                std::int64_t deadline_ns) noexcept {
  std::int64_t started = 0;
  const std::uint32_t pid = current_pid();
  std::uint64_t epoch = slot.epoch.load(std::memory_order_relaxed);
  for (;;) {
    if (!epoch_odd(epoch)) {
      // seq_cst: the odd epoch and the pins load below form a Dekker pair with atomic ops.
      if (slot.epoch.compare_exchange_weak(epoch, epoch_claimed(epoch, pid), std::memory_order_seq_cst,
                                           std::memory_order_relaxed))
        break;
      continue;
    }
    if (!may_wait(deadline_ns)) return false;
    if (started == 0) started = monotonic_ns();
    if (!settle_slot(header, slot, index_entry, epoch, started, deadline_ns, true)) return false;
    epoch = slot.epoch.load(std::memory_order_relaxed);
  }
  std::atomic_thread_fence(std::memory_order_release);  // odd epoch visible before any payload store
  if (slot.pins.load(std::memory_order_seq_cst) == 0) return true;
  // An atomic op is inside (for nanoseconds, unless its process died between pin and unpin).
  const std::int64_t pinned_at = monotonic_ns();
  for (int spins = 0; slot.pins.load(std::memory_order_seq_cst) != 0;) {
    const std::int64_t now = monotonic_ns();
    if (now - pinned_at > kStuckPinAfterNs) {
      slot.pins.store(0, std::memory_order_relaxed);  // the pinning process died between pin and unpin
      break;
    }
    if (!may_wait(deadline_ns) ? spins > kReadSpins : now >= deadline_ns) {
      release_slot(slot);  // give the slot back untouched: busy, as for any held slot
      return false;
    }
    backoff(spins);
  }
  return true;
}

}  // namespace weir::core::detail

#pragma once
// Seqlock writer side and stuck-slot recovery for KV slots. Private to core.
#include <atomic>
#include <cstdint>

#include "weir/core/arena_layout.hpp"
#include "weir/core/detail/slot_meta.hpp"

namespace weir::core::detail {

/// Whether deadline_ns (monotonic) asks for waiting at all; 0 means "try once".
inline bool may_wait(std::int64_t deadline_ns) noexcept { return deadline_ns != 0; }

/// Claims the slot's seqlock (even -> odd with our pid, one CAS), then waits for in-flight atomic
/// ops to drain. With deadline 0 a held slot fails at once (EAGAIN); otherwise it waits, recovering
/// a dead owner's slot, until the deadline. Thread: any writer.
[[nodiscard]] bool claim_slot(ArenaHeader& header, SlotHeader& slot, std::atomic<std::uint64_t>& index_entry,
                              std::int64_t deadline_ns) noexcept;

/// Ends a claim: odd -> even, owner cleared and version bumped in one release store.
inline void release_slot(SlotHeader& slot) noexcept {
  const std::uint64_t odd = slot.epoch.load(std::memory_order_relaxed);  // ours: nobody else moves it now
  slot.epoch.store(epoch_released(odd), std::memory_order_release);  // every payload store is visible first
}

/// Waits (bounded) for an odd epoch to move on; past kStuckAfterNs checks the owner and recovers
/// the slot of a dead one (marking its value torn). Returns false when the deadline passed first.
/// Thread: any; recovery only when the mapping is writable.
[[nodiscard]] bool settle_slot(ArenaHeader& header, SlotHeader& slot, std::atomic<std::uint64_t>& index_entry,
                               std::uint64_t odd_epoch, std::int64_t started_ns, std::int64_t deadline_ns,
                               bool writable) noexcept;

/// Releases a pin taken by an atomic op without ever wrapping below zero.
void unpin(SlotHeader& slot) noexcept;

}  // namespace weir::core::detail

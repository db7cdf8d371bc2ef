#pragma once
// Seqlock writer side and stuck-slot recovery for KV slots. Private to core.
#include <atomic>
#include <cstdint>

#include "weir/core/arena_layout.hpp"
#include "weir/core/detail/epoch.hpp"

namespace weir::core::detail {

inline constexpr std::uint64_t kMetaLenMask = 0xffff'ffffULL;

inline std::uint32_t meta_value_len(std::uint64_t m) noexcept { return static_cast<std::uint32_t>(m & kMetaLenMask); }
inline std::uint32_t meta_key_len(std::uint64_t m) noexcept { return static_cast<std::uint32_t>((m >> 32) & 0xffffU); }
inline ValueType meta_type(std::uint64_t m) noexcept { return static_cast<ValueType>((m >> 48) & 0xffU); }
inline std::uint8_t meta_flags(std::uint64_t m) noexcept { return static_cast<std::uint8_t>(m >> 56); }
inline std::uint64_t make_meta(std::uint32_t value_len, std::uint32_t key_len, ValueType type, std::uint8_t flags) noexcept {
  return std::uint64_t{value_len} | (std::uint64_t{key_len} << 32) | (std::uint64_t{static_cast<std::uint8_t>(type)} << 48) |
         (std::uint64_t{flags} << 56);
}
inline bool meta_live(std::uint64_t m) noexcept { return (meta_flags(m) & kSlotLive) != 0; }

inline IndexState index_state(std::uint64_t e) noexcept { return static_cast<IndexState>(e & kIndexStateMask); }
inline std::uint32_t index_tag(std::uint64_t e) noexcept { return static_cast<std::uint32_t>(e >> kIndexTagShift); }
inline std::uint64_t make_index(IndexState s, std::uint32_t tag) noexcept {
  return static_cast<std::uint64_t>(s) | (std::uint64_t{tag} << kIndexTagShift);
}

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

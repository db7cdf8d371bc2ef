#pragma once
// The publisher's side of signal groups, called by KvStore after a write. Private to core.
#include <cstdint>

#include "weir/core/arena_layout.hpp"

namespace weir::core::detail {

struct SignalView {
  ArenaHeader* header = nullptr;
  SignalGroup* groups = nullptr;
  LogEntry* logs = nullptr;
  WatcherRow* rows = nullptr;
  std::uint32_t log_entries = 0;
};

/// Recomputes which groups a slot's writes pulse, when the group table changed since the slot last
/// looked. Requires: the caller holds the slot's claim (its key and labels are stable).
/// Hot path: one load and compare when nothing changed.
inline std::uint64_t slot_group_bits(const SignalView& v, SlotHeader& s, const std::byte* key,
                                     std::uint32_t key_len) noexcept;

/// Rebuilds group_bits from scratch. Requires: the slot's claim is held.
std::uint64_t refresh_group_bits(const SignalView& v, SlotHeader& s, const std::byte* key,
                                 std::uint32_t key_len, std::uint64_t version) noexcept;

/// The groups a key with these Bloom labels, exact label ids and name matches; stores nothing.
std::uint64_t match_group_bits(const SignalView& v, std::uint64_t labels, std::uint64_t label_ids,
                               const std::byte* key, std::uint32_t key_len) noexcept;

/// The same for a channel: groups of its labels, and channel groups of its name. Thread: its writer.
std::uint64_t channel_group_bits(const SignalView& v, ChannelDesc& d) noexcept;

/// Change-log items name a KV slot, or a channel when this bit is set (then the upper half holds
/// the low 32 bits of the block sequence).
inline constexpr std::uint64_t kChannelItem = std::uint64_t{1} << 31;

/// Pulses every group in `bits`, logs `item` in each group's change log, and rings the doorbell of
/// every watcher asleep on one of them (FUTEX_WAKE only when one sleeps). Thread: any writer.
void pulse_groups(const SignalView& v, std::uint64_t bits, std::uint64_t item) noexcept;

inline std::uint64_t slot_group_bits(const SignalView& v, SlotHeader& s, const std::byte* key,
                                     std::uint32_t key_len) noexcept {
  const std::uint64_t version = v.header->groups_version.load(std::memory_order_acquire);  // pairs with table edits
  if (s.groups_seen.load(std::memory_order_relaxed) == version) return s.group_bits.load(std::memory_order_relaxed);
  return refresh_group_bits(v, s, key, key_len, version);
}

}  // namespace weir::core::detail

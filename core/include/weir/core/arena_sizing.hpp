#pragma once
// Sizing an arena by what it must hold: the slot table and probe window that take a number of keys
// (each with its vector row), and what an arena of some options costs in memory. The rule and the
// measurements behind it: docs/design/kv.md, "Sizing".
#include <cstdint>

#include "weir/core/arena.hpp"
#include "weir/core/error.hpp"

namespace weir::core {

/// Bytes an arena of some options takes, by part, as plan_layout lays it out.
struct ArenaCost {
  std::uint64_t slots = 0;   // KV slots (header, key, value) and their index entries
  std::uint64_t vectors = 0; // vector rows, one per slot (0 without vectors)
  std::uint64_t other = 0;   // header, signal groups and logs, channels and their pool, tables
  std::uint64_t total = 0;   // the whole mapping: slots + vectors + other
};

/// The memory of an arena created with `options`. Fails as plan_layout does. Pure.
[[nodiscard]] Result<ArenaCost> arena_cost(const ArenaOptions& options);

/// Slots a sized arena gets for `keys` keys: (keys + kSizedHeadroomKeys) / (kSizedLoadPercent / 100),
/// rounded up. May exceed kMaxSlotCount (sized_for_keys refuses that). Pure.
[[nodiscard]] std::uint64_t sized_slot_count(std::uint64_t keys) noexcept;

/// The most keys a sized arena can be asked for (its slots stay within kMaxSlotCount). Pure.
[[nodiscard]] std::uint64_t max_sized_keys() noexcept;

/// `base` with slot_count = sized_slot_count(keys) and max_probe = kSizedMaxProbe: `keys` keys with
/// any names, plus kSizedHeadroomKeys more, then insert without "full" (the chance that one insert
/// finds its probe window full is about 1e-12 for the largest table, less for smaller ones; docs/design/kv.md).
/// Every other option is kept. Fails with invalid_argument naming the count when keys is 0 or
/// more than max_sized_keys(). Pure.
[[nodiscard]] Result<ArenaOptions> sized_for_keys(std::uint64_t keys, const ArenaOptions& base);

}  // namespace weir::core

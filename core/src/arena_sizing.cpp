// Sizing rule for a number of keys, and the memory an arena's options cost. Why the numbers:
// docs/design/kv.md, "Sizing".
#include "weir/core/arena_sizing.hpp"

#include <string>

#include "weir/core/limits.hpp"

namespace weir::core {

Result<ArenaCost> arena_cost(const ArenaOptions& options) {
  ArenaHeader planned{};
  if (auto r = plan_layout(options, planned); !r) return tl::make_unexpected(r.error());
  const auto bytes = [&](Region r) { return planned.regions[static_cast<std::uint32_t>(r)].bytes; };
  ArenaCost cost;
  cost.slots = bytes(Region::index) + bytes(Region::slots);
  cost.vectors = bytes(Region::vectors);
  cost.total = planned.arena_bytes;
  cost.other = cost.total - cost.slots - cost.vectors;
  return cost;
}

std::uint64_t sized_slot_count(std::uint64_t keys) noexcept {
  const std::uint64_t wanted = keys + kSizedHeadroomKeys;
  return (wanted * 100 + kSizedLoadPercent - 1) / kSizedLoadPercent;
}

std::uint64_t max_sized_keys() noexcept {
  return std::uint64_t{kMaxSlotCount} * kSizedLoadPercent / 100 - kSizedHeadroomKeys;
}

Result<ArenaOptions> sized_for_keys(std::uint64_t keys, const ArenaOptions& base) {
  if (keys == 0 || keys > max_sized_keys())
    return fail(Errc::invalid_argument, "cannot size an arena for " + std::to_string(keys) + " keys: the count must be 1.." +
                                            std::to_string(max_sized_keys()));
  ArenaOptions o = base;
  o.slot_count = static_cast<std::uint32_t>(sized_slot_count(keys));
  o.max_probe = kSizedMaxProbe;
  return o;
}

}  // namespace weir::core

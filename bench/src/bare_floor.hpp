#pragma once
// The floor every KV case is measured against: the bare seqlock with the bench arena's geometry,
// cycled over kKeyCount slots spread like hashed keys, with its own value and output buffers.
#include <array>
#include <cstdint>
#include <cstring>

#include "bare_seqlock.hpp"
#include "harness.hpp"
#include "weir/core/arena_layout.hpp"
#include "weir/core/limits.hpp"

namespace weir::bench {

class BareFloor {
 public:
  /// Over kKeyCount slots spread evenly over the map.
  BareFloor() noexcept : BareFloor(spread_slots()) {}
  /// Over the given slot numbers (each below kArenaSlots): pass the KV store's own slots and both
  /// sides share one cache and TLB footprint, so only the work per call differs.
  explicit BareFloor(const std::array<std::uint32_t, kKeyCount>& slots) noexcept
      : lock_(kArenaSlots, core::slot_stride_for(kArenaKeyBytes, kLargeBytes),
              core::value_offset_in_slot(kArenaKeyBytes)),
        slots_(slots) {
    for (std::size_t i = 0; i < value_.size(); ++i) value_[i] = static_cast<std::byte>(i);
  }

  // An odd multiplier permutes the slot numbers mod a power of two: kKeyCount distinct slots
  // spread over the map, like hashed keys, rather than one contiguous run the prefetcher would love.
  [[nodiscard]] static std::array<std::uint32_t, kKeyCount> spread_slots() noexcept {
    constexpr std::uint32_t kSpreadMultiplier = 2'654'435'761U;  // Knuth's multiplicative hash constant
    static_assert((kArenaSlots & (kArenaSlots - 1)) == 0, "the spread relies on a power-of-two slot count");
    std::array<std::uint32_t, kKeyCount> slots{};
    for (std::uint32_t i = 0; i < kKeyCount; ++i) slots[i] = (i * kSpreadMultiplier) % kArenaSlots;
    return slots;
  }

  [[nodiscard]] bool valid() const noexcept { return lock_.valid(); }

  /// Publishes `bytes` (pass it through opaque(): a run-time size, as in the store) to call i's slot.
  bool publish(std::uint64_t i, std::size_t bytes) noexcept {
    lock_.publish(slots_[i % kKeyCount], value_.data(), bytes);
    return true;
  }
  /// Reads call i's slot under its seqlock; false: busy past the spin limit.
  bool read(std::uint64_t i, std::size_t bytes) noexcept {
    const bool ok = lock_.read(slots_[i % kKeyCount], out_.data(), bytes, core::kReadSpins);
    keep(out_.data());
    return ok;
  }
  /// A plain memcpy out of call i's slot: the floor under the seqlock itself.
  bool copy(std::uint64_t i, std::size_t bytes) noexcept {
    std::memcpy(out_.data(), lock_.payload(slots_[i % kKeyCount]), bytes);
    keep(out_.data());
    return true;
  }

 private:
  BareSeqlock lock_;
  std::array<std::uint32_t, kKeyCount> slots_{};
  alignas(core::kCacheLine) std::array<std::byte, kLargeBytes> value_{};
  alignas(core::kCacheLine) std::array<std::byte, kLargeBytes> out_{};
};

}  // namespace weir::bench

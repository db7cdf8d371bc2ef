// The floors: a bare seqlock with the arena's geometry, and memcpy from the same slots.
#include <array>
#include <cstring>

#include "bare_seqlock.hpp"
#include "cases.hpp"
#include "weir/core/arena_layout.hpp"

namespace weir::bench {

namespace {

// An odd multiplier permutes the slot numbers mod a power of two: kKeyCount distinct slots spread
// over the map, like hashed keys, rather than one contiguous run the prefetcher would love.
constexpr std::uint32_t kSpreadMultiplier = 2'654'435'761U;  // Knuth's multiplicative hash constant
static_assert((kArenaSlots & (kArenaSlots - 1)) == 0, "the spread relies on a power-of-two slot count");

std::array<std::uint32_t, kKeyCount> spread_slots() noexcept {
  std::array<std::uint32_t, kKeyCount> slots{};
  for (std::uint32_t i = 0; i < kKeyCount; ++i) slots[i] = (i * kSpreadMultiplier) % kArenaSlots;
  return slots;
}

void run_size(const Config& config, BareSeqlock& lock, const std::array<std::uint32_t, kKeyCount>& slots,
              std::uint32_t size_bytes, std::string_view size_name, Results& results) {
  const std::size_t bytes = opaque(std::size_t{size_bytes});
  alignas(core::kCacheLine) std::array<std::byte, kLargeBytes> value{};
  alignas(core::kCacheLine) std::array<std::byte, kLargeBytes> out{};
  for (std::size_t i = 0; i < value.size(); ++i) value[i] = static_cast<std::byte>(i);
  const std::string size(size_name);
  {
    const Measured m = measure(config, [&](std::uint64_t i) noexcept {
      lock.publish(slots[i % kKeyCount], value.data(), bytes);
      return true;
    });
    results.add("base.seqlock.publish." + size, m, "none");
  }
  {
    const Measured m = measure(config, [&](std::uint64_t i) noexcept {
      const bool ok = lock.read(slots[i % kKeyCount], out.data(), bytes, core::kReadSpins);
      keep(out.data());
      return ok;
    });
    results.add("base.seqlock.read." + size, m, "busy");
  }
  {
    const Measured m = measure(config, [&](std::uint64_t i) noexcept {
      std::memcpy(out.data(), lock.payload(slots[i % kKeyCount]), bytes);
      keep(out.data());
      return true;
    });
    results.add("base.memcpy." + size, m, "none");
  }
}

}  // namespace

void run_baseline_cases(const Config& config, Results& results) {
  BareSeqlock lock(kArenaSlots, core::slot_stride_for(kArenaKeyBytes, kLargeBytes),
                   core::value_offset_in_slot(kArenaKeyBytes));
  if (!lock.valid()) {
    results.note_error("setup.mmap", "mmap of the bare seqlock map failed");
    return;
  }
  const auto slots = spread_slots();
  run_size(config, lock, slots, kSmallBytes, "64B", results);
  run_size(config, lock, slots, kLargeBytes, "4KiB", results);
}

}  // namespace weir::bench

#pragma once
// The 64-bit seqlock word of every slot and vector row. While odd it also names its writer, so a
// claim and the record of who holds it are one atomic step: a writer killed at any instant leaves
// a word that says which process to check.
//
//   bit 0       odd: a write is in progress
//   bits 1-22   pid of the writer while odd (Linux pids are below 2^22), 0 while even
//   bits 23-63  version: bumped by one on every completed write (41 bits: no wrap in practice)
#include <cstdint>

namespace weir::core::detail {

inline constexpr std::uint64_t kEpochOdd = 1;
inline constexpr unsigned kEpochPidShift = 1;
inline constexpr std::uint64_t kEpochPidMask = ((std::uint64_t{1} << 22) - 1) << kEpochPidShift;
inline constexpr std::uint64_t kEpochUnit = std::uint64_t{1} << 23;  // one version step

[[nodiscard]] constexpr bool epoch_odd(std::uint64_t w) noexcept { return (w & kEpochOdd) != 0; }
[[nodiscard]] constexpr std::uint64_t epoch_version(std::uint64_t w) noexcept { return w / kEpochUnit; }
[[nodiscard]] constexpr std::uint32_t epoch_owner(std::uint64_t w) noexcept {
  return static_cast<std::uint32_t>((w & kEpochPidMask) >> kEpochPidShift);
}
/// The odd word a writer with `pid` stores over the even word `even`.
[[nodiscard]] constexpr std::uint64_t epoch_claimed(std::uint64_t even, std::uint32_t pid) noexcept {
  return even | ((std::uint64_t{pid} << kEpochPidShift) & kEpochPidMask) | kEpochOdd;
}
/// The even word that ends the write begun by `odd`: owner cleared, version + 1.
[[nodiscard]] constexpr std::uint64_t epoch_released(std::uint64_t odd) noexcept {
  return (odd & ~(kEpochUnit - 1)) + kEpochUnit;
}

static_assert(epoch_owner(epoch_claimed(5 * kEpochUnit, 4194303)) == 4194303);
static_assert(epoch_released(epoch_claimed(5 * kEpochUnit, 77)) == 6 * kEpochUnit);

}  // namespace weir::core::detail

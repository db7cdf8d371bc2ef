#pragma once
// Packing of a slot's meta word and of probe-table entries (layout: arena_layout.hpp).
#include <cstdint>

#include "weir/core/arena_layout.hpp"

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
/// The live and torn flags in place, and live alone: `((m ^ kMetaLive) & kMetaLiveTorn) == 0` is
/// "live and not torn" in two operations.
inline constexpr std::uint64_t kMetaLive = std::uint64_t{kSlotLive} << 56;
inline constexpr std::uint64_t kMetaLiveTorn = std::uint64_t{kSlotLive | kSlotTorn} << 56;

inline IndexState index_state(std::uint64_t e) noexcept { return static_cast<IndexState>(e & kIndexStateMask); }
inline std::uint32_t index_tag(std::uint64_t e) noexcept { return static_cast<std::uint32_t>(e >> kIndexTagShift); }
inline std::uint64_t make_index(IndexState s, std::uint32_t tag) noexcept {
  return static_cast<std::uint64_t>(s) | (std::uint64_t{tag} << kIndexTagShift);
}

inline bool is_word_type(ValueType t) noexcept { return t == ValueType::i64 || t == ValueType::u64 || t == ValueType::f64; }

}  // namespace weir::core::detail

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
/// Non-zero when the meta word's type is ValueType::array: one compare, usable in a branch-free OR.
inline std::uint64_t meta_is_array(std::uint64_t m) noexcept {
  return static_cast<std::uint64_t>(((m >> 48) & 0xffU) == static_cast<std::uint8_t>(ValueType::array));
}
/// SlotHeader::array_shape/array_dims words: bits 0-7 element Dtype, 8-15 rank; dims[0] | dims[1] << 32.
inline std::uint64_t pack_array_shape(std::uint32_t dtype, std::uint32_t rank) noexcept {
  return std::uint64_t{dtype & 0xffU} | (std::uint64_t{rank & 0xffU} << 8);
}
inline std::uint64_t pack_array_dims(std::uint32_t d0, std::uint32_t d1) noexcept {
  return std::uint64_t{d0} | (std::uint64_t{d1} << 32);
}
inline std::uint32_t shape_dtype(std::uint64_t w) noexcept { return static_cast<std::uint32_t>(w & 0xffU); }
inline std::uint32_t shape_rank(std::uint64_t w) noexcept { return static_cast<std::uint32_t>((w >> 8) & 0xffU); }
inline std::uint32_t dims_at(std::uint64_t w, unsigned i) noexcept { return static_cast<std::uint32_t>(w >> (32 * i)); }

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

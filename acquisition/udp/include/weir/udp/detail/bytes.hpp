#pragma once
// Loads and stores of fixed-width unsigned integers at any alignment in a chosen byte order: how
// the packet codecs read fields in place without casting the datagram to a struct.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace weir::acq::detail {

template <class T>
[[nodiscard]] constexpr T byteswap(T v) noexcept {
  static_assert(std::is_unsigned_v<T>);
  if constexpr (sizeof(T) == 1) return v;
  else if constexpr (sizeof(T) == 2) return static_cast<T>(__builtin_bswap16(v));
  else if constexpr (sizeof(T) == 4) return static_cast<T>(__builtin_bswap32(v));
  else return static_cast<T>(__builtin_bswap64(v));
}

template <class T>
[[nodiscard]] inline T load_le(const std::byte* p) noexcept {
  T v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (std::endian::native == std::endian::big) v = byteswap(v);
  return v;
}

template <class T>
[[nodiscard]] inline T load_be(const std::byte* p) noexcept {
  T v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (std::endian::native == std::endian::little) v = byteswap(v);
  return v;
}

template <class T>
inline void store_le(std::byte* p, T v) noexcept {
  if constexpr (std::endian::native == std::endian::big) v = byteswap(v);
  std::memcpy(p, &v, sizeof v);
}

template <class T>
inline void store_be(std::byte* p, T v) noexcept {
  if constexpr (std::endian::native == std::endian::little) v = byteswap(v);
  std::memcpy(p, &v, sizeof v);
}

/// Copies `count` samples of `element_bytes` each, swapping the bytes of each swap_bytes-wide word
/// (a complex f32 pair swaps each half): network order to host order or back. Overlap not allowed.
void copy_swapped(std::byte* dst, const std::byte* src, std::size_t bytes, std::uint32_t swap_bytes) noexcept;

}  // namespace weir::acq::detail

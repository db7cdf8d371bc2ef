#pragma once
// Key hash: 64 bits, fast on short keys (a wyhash-style multiply-fold). Low half picks the home
// slot, high half is the tag kept in the probe table, so the two are independent. Part of the
// arena format (it places keys and sets label bits): a change bumps kArenaLayoutVersion, and the
// golden test pins its values.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace weir::core::detail {

__extension__ typedef unsigned __int128 u128;

inline std::uint64_t fold_mul(std::uint64_t a, std::uint64_t b) noexcept {
  const u128 r = static_cast<u128>(a) * b;
  return static_cast<std::uint64_t>(r) ^ static_cast<std::uint64_t>(r >> 64);
}

inline std::uint64_t read8(const char* p) noexcept {
  std::uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}
inline std::uint64_t read4(const char* p) noexcept {
  std::uint32_t w;
  std::memcpy(&w, p, 4);
  return w;
}

inline std::uint64_t hash_key(std::string_view key) noexcept {
  constexpr std::uint64_t k0 = 0xa0761d6478bd642fULL, k1 = 0xe7037ed1a0b428dbULL, k2 = 0x8ebc6af09c88c6e3ULL;
  const char* p = key.data();
  std::size_t n = key.size();
  std::uint64_t seed = k2 ^ n;
  while (n > 8) {
    seed = fold_mul(read8(p) ^ k0, seed ^ k1);
    p += 8;
    n -= 8;
  }
  // The last 1..8 bytes, read without a variable-length copy (overlapping reads, as wyhash does).
  std::uint64_t tail = 0;
  if (n >= 4) {
    tail = (read4(p) << 32) | read4(p + n - 4);
  } else if (n > 0) {
    tail = (std::uint64_t{static_cast<unsigned char>(p[0])} << 16) |
           (std::uint64_t{static_cast<unsigned char>(p[n >> 1])} << 8) | static_cast<unsigned char>(p[n - 1]);
  }
  seed = fold_mul(tail ^ k0, seed ^ k1);  // the length is in the seed once: a second xor would cancel it
  return fold_mul(seed, k2);
}

inline std::uint32_t home_slot(std::uint64_t hash, std::uint32_t slot_count) noexcept {
  return static_cast<std::uint32_t>((hash & 0xffff'ffffULL) * slot_count >> 32);  // range-reduce the low half
}

}  // namespace weir::core::detail

#pragma once
// Self-checking payloads: word 0 is a counter, every middle word is derived from it, and the last
// word is a checksum of the others. A copy mixing two versions fails the check.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace weir::test {

inline constexpr std::uint64_t kPayloadSeed = 0xcbf29ce484222325ULL;   // FNV-1a offset basis
inline constexpr std::uint64_t kPayloadPrime = 0x100000001b3ULL;       // FNV-1a prime
inline constexpr std::size_t kPayloadMinBytes = 2 * sizeof(std::uint64_t);

inline std::uint64_t mix64(std::uint64_t x) noexcept {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// Fills out with the payload for counter. Requires: out.size() is a multiple of 8, at least 16.
inline void fill_payload(std::span<std::byte> out, std::uint64_t counter) noexcept {
  const std::size_t words = out.size() / sizeof(std::uint64_t);
  std::uint64_t sum = kPayloadSeed;
  for (std::size_t i = 0; i + 1 < words; ++i) {
    const std::uint64_t w = i == 0 ? counter : mix64(counter + i);
    std::memcpy(out.data() + i * sizeof(w), &w, sizeof(w));
    sum = (sum ^ w) * kPayloadPrime;
  }
  std::memcpy(out.data() + (words - 1) * sizeof(sum), &sum, sizeof(sum));
}

/// The counter of a payload.
inline std::uint64_t payload_counter(std::span<const std::byte> in) noexcept {
  std::uint64_t counter = 0;
  if (in.size() >= sizeof(counter)) std::memcpy(&counter, in.data(), sizeof(counter));
  return counter;
}

/// Whether in is exactly a payload fill_payload wrote, for whatever counter it carries.
inline bool payload_ok(std::span<const std::byte> in) noexcept {
  if (in.size() < kPayloadMinBytes || in.size() % sizeof(std::uint64_t) != 0) return false;
  const std::size_t words = in.size() / sizeof(std::uint64_t);
  const std::uint64_t counter = payload_counter(in);
  std::uint64_t sum = kPayloadSeed;
  for (std::size_t i = 0; i + 1 < words; ++i) {
    std::uint64_t w = 0;
    std::memcpy(&w, in.data() + i * sizeof(w), sizeof(w));
    if (i != 0 && w != mix64(counter + i)) return false;
    sum = (sum ^ w) * kPayloadPrime;
  }
  std::uint64_t stored = 0;
  std::memcpy(&stored, in.data() + (words - 1) * sizeof(stored), sizeof(stored));
  return stored == sum;
}

}  // namespace weir::test

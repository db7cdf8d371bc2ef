// Bitshuffle's bit transpose (bitshuffle_core.c, bshuf_trans_bit_elem and its inverse), one 8 x 8
// bit-matrix transpose per byte of every 8 elements, specialised for 1-, 2-, 4- and 8-byte elements.
#include <algorithm>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "formats.hpp"

namespace weir::codec::detail {

namespace {

// Transposes the 8 x 8 bit matrix in x: bit k of byte m moves to bit m of byte k.
inline std::uint64_t transpose8x8(std::uint64_t x) noexcept {
  std::uint64_t t = (x ^ (x >> 7)) & 0x00AA00AA00AA00AAULL;
  x = x ^ t ^ (t << 7);
  t = (x ^ (x >> 14)) & 0x0000CCCC0000CCCCULL;
  x = x ^ t ^ (t << 14);
  t = (x ^ (x >> 28)) & 0x00000000F0F0F0F0ULL;
  return x ^ t ^ (t << 28);
}

// Groups of 8 elements [first_group, row) through the 8 x 8 bit transpose.
template <std::size_t E>
void transpose_groups(const std::byte* in, std::byte* out, std::size_t elements, std::size_t first_group) noexcept {
  const std::size_t row = elements / 8;  // bytes in each of the 8 x E bit rows
  for (std::size_t b = first_group; b < row; ++b) {
    const std::byte* group = in + b * 8 * E;
    for (std::size_t j = 0; j < E; ++j) {
      std::uint64_t x = 0;
      for (std::size_t m = 0; m < 8; ++m) x |= static_cast<std::uint64_t>(group[m * E + j]) << (8 * m);
      x = transpose8x8(x);
      for (std::size_t k = 0; k < 8; ++k) out[(j * 8 + k) * row + b] = static_cast<std::byte>((x >> (8 * k)) & 0xFFU);
    }
  }
}

#if defined(__SSE2__)
// Byte j of 16 consecutive elements, in element order.
template <std::size_t E>
inline __m128i gather16(const std::byte* elements, std::size_t j) noexcept {
  if constexpr (E == 1) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(elements));
  } else if constexpr (E == 2) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(elements));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(elements + 16));
    if (j == 0) {
      const __m128i low = _mm_set1_epi16(0x00FF);
      return _mm_packus_epi16(_mm_and_si128(a, low), _mm_and_si128(b, low));
    }
    return _mm_packus_epi16(_mm_srli_epi16(a, 8), _mm_srli_epi16(b, 8));
  } else {
    alignas(16) std::byte bytes[16];
    for (std::size_t m = 0; m < 16; ++m) bytes[m] = elements[m * E + j];
    return _mm_load_si128(reinterpret_cast<const __m128i*>(bytes));
  }
}
#endif

// 16 elements at a time where SSE2 is there: movemask takes bit 7 of 16 bytes at once, which is
// two bytes of a bit row, element m at bit m; shifting each byte left brings the next bit to bit 7.
template <std::size_t E>
void transpose_fixed(const std::byte* in, std::byte* out, std::size_t elements) noexcept {
  std::size_t first_group = 0;
#if defined(__SSE2__)
  const std::size_t row = elements / 8;
  const std::size_t sixteens = elements / 16;
  for (std::size_t g = 0; g < sixteens; ++g) {
    const std::byte* group = in + g * 16 * E;
    for (std::size_t j = 0; j < E; ++j) {
      __m128i x = gather16<E>(group, j);
      for (int k = 7; k >= 0; --k) {
        const auto bits = static_cast<std::uint16_t>(_mm_movemask_epi8(x));
        std::memcpy(out + (j * 8 + static_cast<std::size_t>(k)) * row + 2 * g, &bits, 2);
        x = _mm_add_epi8(x, x);  // every byte one bit left, within the byte
      }
    }
  }
  first_group = 2 * sixteens;
#endif
  transpose_groups<E>(in, out, elements, first_group);
}

template <std::size_t E>
void untranspose_fixed(const std::byte* in, std::byte* out, std::size_t elements) noexcept {
  const std::size_t row = elements / 8;
  for (std::size_t b = 0; b < row; ++b) {
    std::byte* group = out + b * 8 * E;
    for (std::size_t j = 0; j < E; ++j) {
      std::uint64_t x = 0;
      for (std::size_t k = 0; k < 8; ++k) x |= static_cast<std::uint64_t>(in[(j * 8 + k) * row + b]) << (8 * k);
      x = transpose8x8(x);
      for (std::size_t m = 0; m < 8; ++m) group[m * E + j] = static_cast<std::byte>((x >> (8 * m)) & 0xFFU);
    }
  }
}

}  // namespace

std::size_t bitshuffle_block_elements(std::size_t element_bytes) noexcept {
  const std::size_t block = kBitshuffleTargetBlockBytes / std::max<std::size_t>(element_bytes, 1);
  return std::max(block / kBitshuffleBlockMultiple * kBitshuffleBlockMultiple, kBitshuffleMinBlockElements);
}

void bit_transpose(const std::byte* in, std::byte* out, std::size_t elements, std::size_t element_bytes) noexcept {
  switch (element_bytes) {
    case 1: transpose_fixed<1>(in, out, elements); break;
    case 2: transpose_fixed<2>(in, out, elements); break;
    case 4: transpose_fixed<4>(in, out, elements); break;
    case 8: transpose_fixed<8>(in, out, elements); break;
    default: break;  // validate() admits only these sizes
  }
}

void bit_untranspose(const std::byte* in, std::byte* out, std::size_t elements, std::size_t element_bytes) noexcept {
  switch (element_bytes) {
    case 1: untranspose_fixed<1>(in, out, elements); break;
    case 2: untranspose_fixed<2>(in, out, elements); break;
    case 4: untranspose_fixed<4>(in, out, elements); break;
    case 8: untranspose_fixed<8>(in, out, elements); break;
    default: break;
  }
}

}  // namespace weir::codec::detail

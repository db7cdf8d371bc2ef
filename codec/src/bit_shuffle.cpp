// Bitshuffle's bit transpose (bitshuffle_core.c, bshuf_trans_bit_elem and its inverse), one 8 x 8
// bit-matrix transpose per byte of every 8 elements, specialised for 1-, 2-, 4- and 8-byte elements.
#include <algorithm>

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

template <std::size_t E>
void transpose_fixed(const std::byte* in, std::byte* out, std::size_t elements) noexcept {
  const std::size_t row = elements / 8;  // bytes in each of the 8 x E bit rows
  for (std::size_t b = 0; b < row; ++b) {
    const std::byte* group = in + b * 8 * E;
    for (std::size_t j = 0; j < E; ++j) {
      std::uint64_t x = 0;
      for (std::size_t m = 0; m < 8; ++m) x |= static_cast<std::uint64_t>(group[m * E + j]) << (8 * m);
      x = transpose8x8(x);
      for (std::size_t k = 0; k < 8; ++k) out[(j * 8 + k) * row + b] = static_cast<std::byte>((x >> (8 * k)) & 0xFFU);
    }
  }
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

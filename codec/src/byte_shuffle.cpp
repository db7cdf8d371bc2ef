// HDF5's byte shuffle (filter 2) and its inverse, with loops specialised for 2-, 4- and 8-byte
// elements so the compiler unrolls them.
#include <algorithm>
#include <cstring>

#include "formats.hpp"

namespace weir::codec::detail {

namespace {

template <std::size_t E>
void shuffle_fixed(const std::byte* in, std::byte* out, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < E; ++k) out[k * n + i] = in[i * E + k];
}

template <std::size_t E>
void unshuffle_fixed(const std::byte* in, std::byte* out, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < E; ++k) out[i * E + k] = in[k * n + i];
}

}  // namespace

void byte_shuffle(const std::byte* in, std::byte* out, std::size_t bytes, std::size_t element_bytes) noexcept {
  const std::size_t n = bytes / std::max<std::size_t>(element_bytes, 1);
  if (element_bytes <= 1 || n <= 1) {  // HDF5 leaves these chunks as they are
    if (bytes > 0) std::memcpy(out, in, bytes);
    return;
  }
  switch (element_bytes) {
    case 2: shuffle_fixed<2>(in, out, n); break;
    case 4: shuffle_fixed<4>(in, out, n); break;
    case 8: shuffle_fixed<8>(in, out, n); break;
    default:
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t k = 0; k < element_bytes; ++k) out[k * n + i] = in[i * element_bytes + k];
  }
  const std::size_t whole = n * element_bytes;
  if (bytes > whole) std::memcpy(out + whole, in + whole, bytes - whole);  // the leftover bytes, last
}

void byte_unshuffle(const std::byte* in, std::byte* out, std::size_t bytes, std::size_t element_bytes) noexcept {
  const std::size_t n = bytes / std::max<std::size_t>(element_bytes, 1);
  if (element_bytes <= 1 || n <= 1) {
    if (bytes > 0) std::memcpy(out, in, bytes);
    return;
  }
  switch (element_bytes) {
    case 2: unshuffle_fixed<2>(in, out, n); break;
    case 4: unshuffle_fixed<4>(in, out, n); break;
    case 8: unshuffle_fixed<8>(in, out, n); break;
    default:
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t k = 0; k < element_bytes; ++k) out[i * element_bytes + k] = in[k * n + i];
  }
  const std::size_t whole = n * element_bytes;
  if (bytes > whole) std::memcpy(out + whole, in + whole, bytes - whole);
}

}  // namespace weir::codec::detail

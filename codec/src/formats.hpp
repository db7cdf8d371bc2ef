#pragma once
// The stored formats, declared once: the registered filter numbers, the LZ4 plugin's and bitshuffle's
// block headers (big-endian), the two shuffles, and the decoders of one filter stage that both
// decode() and the filter classes use.
#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "weir/codec/codec.hpp"
#include "weir/core/error.hpp"

namespace weir::codec::detail {

inline constexpr H5Z_filter_t kFilterLz4 = 32004;         // HDF5's registered LZ4 filter
inline constexpr H5Z_filter_t kFilterBitshuffle = 32008;  // bitshuffle's filter
inline constexpr H5Z_filter_t kFilterZstd = 32015;        // zstd's filter

// The LZ4 plugin (H5Zlz4.c): u64 BE chunk bytes, u32 BE block bytes, then per block a u32 BE stored
// size and the bytes; a block whose LZ4 form does not shrink is stored as it is (stored size == block).
inline constexpr std::size_t kLz4HeaderBytes = 12;
inline constexpr std::size_t kLz4MaxBlockBytes = std::size_t{1} << 30;  // the plugin's default block

// Bitshuffle's filter (bshuf_h5filter.c) with LZ4: cd_values {major, minor, element bytes, block
// elements, compression}; u64 BE chunk bytes, u32 BE block bytes, then per block a u32 BE LZ4 size and
// the LZ4 of the block's bit-transposed elements; the last (elements % 8) elements stored as they are.
inline constexpr unsigned kBitshuffleMajor = 0;
inline constexpr unsigned kBitshuffleMinor = 4;
inline constexpr unsigned kBitshuffleLz4 = 2;  // cd_values[4]: LZ4 after the bit transpose
inline constexpr std::size_t kBitshuffleHeaderBytes = 12;
inline constexpr std::size_t kBitshuffleBlockMultiple = 8;        // blocks hold a multiple of 8 elements
inline constexpr std::size_t kBitshuffleTargetBlockBytes = 8192;  // bshuf_default_block_size()
inline constexpr std::size_t kBitshuffleMinBlockElements = 128;

inline constexpr int kZstdDefaultLevel = 3;  // a zstd filter given no level (ZSTD_CLEVEL_DEFAULT)

/// Bitshuffle's default block, in elements, for elements of `element_bytes` (stable: in the format).
std::size_t bitshuffle_block_elements(std::size_t element_bytes) noexcept;

inline void put_be32(std::byte* at, std::uint32_t v) noexcept {
  for (int i = 3; i >= 0; --i, v >>= 8) at[i] = static_cast<std::byte>(v & 0xFFU);
}
inline void put_be64(std::byte* at, std::uint64_t v) noexcept {
  for (int i = 7; i >= 0; --i, v >>= 8) at[i] = static_cast<std::byte>(v & 0xFFU);
}
inline std::uint32_t get_be32(const std::byte* at) noexcept {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<std::uint32_t>(at[i]);
  return v;
}
inline std::uint64_t get_be64(const std::byte* at) noexcept {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<std::uint64_t>(at[i]);
  return v;
}

/// HDF5's shuffle (H5Z_filter_shuffle): byte k of every element together, the bytes past the last
/// whole element kept at the end as they are; a copy when element_bytes is 1 or there is at most one
/// element. `in` and `out` hold `bytes` bytes each and do not overlap.
void byte_shuffle(const std::byte* in, std::byte* out, std::size_t bytes, std::size_t element_bytes) noexcept;
void byte_unshuffle(const std::byte* in, std::byte* out, std::size_t bytes, std::size_t element_bytes) noexcept;

/// Bitshuffle's transpose of one block of `elements` (a multiple of 8): 8 x element_bytes rows of
/// elements / 8 bytes, row 8j+k holding bit k of byte j of every element, element 8b+m at bit m of
/// the row's byte b. `in` and `out` hold elements x element_bytes bytes and do not overlap.
void bit_transpose(const std::byte* in, std::byte* out, std::size_t elements, std::size_t element_bytes) noexcept;
void bit_untranspose(const std::byte* in, std::byte* out, std::size_t elements, std::size_t element_bytes) noexcept;

/// The chunk bytes an encoded stage says it holds (LZ4 and bitshuffle headers, zstd's frame content
/// size); refused when the input is too short or says nothing. Not for deflate or none.
core::Result<std::size_t> stored_chunk_bytes(Method method, std::span<const std::byte> encoded);

/// Decodes one stage (the method alone, no byte shuffle) into exactly out.size() bytes; a malformed
/// input is refused with what is wrong, never read past its end.
core::Result<void> decode_stage(Method method, std::size_t element_bytes, std::span<const std::byte> encoded,
                                std::span<std::byte> out);

/// A codec that every function here accepts: levels in range, shuffle only with deflate, lz4, zstd,
/// element bytes 1, 2, 4 or 8.
core::Result<void> validate(const Codec& codec, std::size_t element_bytes);

}  // namespace weir::codec::detail

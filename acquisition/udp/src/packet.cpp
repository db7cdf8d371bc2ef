// Names of the refusal reasons, sample sizes, and the byte-order copy both formats share.
#include "weir/udp/packet.hpp"

#include <cstring>

#include "weir/udp/detail/bytes.hpp"

namespace weir::acq {

std::string_view packet_status_name(PacketStatus status) noexcept {
  switch (status) {
    case PacketStatus::ok: return "ok";
    case PacketStatus::too_short: return "too_short";
    case PacketStatus::bad_magic: return "bad_magic";
    case PacketStatus::bad_version: return "bad_version";
    case PacketStatus::bad_type: return "bad_type";
    case PacketStatus::bad_dtype: return "bad_dtype";
    case PacketStatus::size_mismatch: return "size_mismatch";
    case PacketStatus::misaligned_payload: return "misaligned_payload";
    case PacketStatus::empty_payload: return "empty_payload";
    case PacketStatus::truncated: return "truncated";
  }
  return "unknown";
}

std::uint32_t sample_bytes(core::Dtype dtype) noexcept {
  switch (dtype) {
    case core::Dtype::i8:
    case core::Dtype::u8: return 1;
    case core::Dtype::i16:
    case core::Dtype::u16: return 2;
    case core::Dtype::i32:
    case core::Dtype::u32:
    case core::Dtype::f32: return 4;
    case core::Dtype::i64:
    case core::Dtype::f64:
    case core::Dtype::c64: return 8;
  }
  return 0;
}

std::uint32_t swap_unit_bytes(core::Dtype dtype) noexcept {
  return dtype == core::Dtype::c64 ? 4 : sample_bytes(dtype);
}

namespace detail {

namespace {
constexpr std::size_t kSwapVectorBytes = 16;  // one SSE2 register: GCC vector types of this size need nothing newer

// 16- and 32-bit words: whole 16-byte vectors swapped with shifts and masks (GCC vector types, so
// SSE2 instructions at any -march), the tail one word at a time; 64-bit words one at a time.
template <class T>
void swap_words(std::byte* __restrict dst, const std::byte* __restrict src, std::size_t bytes) noexcept {
  const std::size_t n = bytes / sizeof(T);
  std::size_t i = 0;
  if constexpr (sizeof(T) == 2 || sizeof(T) == 4) {
    using V [[gnu::vector_size(kSwapVectorBytes)]] = T;
    constexpr std::size_t kLanes = kSwapVectorBytes / sizeof(T);
    for (; i + kLanes <= n; i += kLanes) {
      V v;
      std::memcpy(&v, src + i * sizeof(T), sizeof v);
      if constexpr (sizeof(T) == 2) {
        v = (v << 8) | (v >> 8);
      } else {
        v = (v << 24) | ((v << 8) & 0x00FF0000U) | ((v >> 8) & 0x0000FF00U) | (v >> 24);
      }
      std::memcpy(dst + i * sizeof(T), &v, sizeof v);
    }
  }
  for (; i < n; ++i) {
    T v;
    std::memcpy(&v, src + i * sizeof(T), sizeof v);
    v = byteswap(v);
    std::memcpy(dst + i * sizeof(T), &v, sizeof v);
  }
}
}  // namespace

void copy_swapped(std::byte* dst, const std::byte* src, std::size_t bytes, std::uint32_t swap_bytes) noexcept {
  switch (swap_bytes) {
    case 2: swap_words<std::uint16_t>(dst, src, bytes); break;
    case 4: swap_words<std::uint32_t>(dst, src, bytes); break;
    case 8: swap_words<std::uint64_t>(dst, src, bytes); break;
    default: std::memcpy(dst, src, bytes); break;
  }
}

}  // namespace detail
}  // namespace weir::acq

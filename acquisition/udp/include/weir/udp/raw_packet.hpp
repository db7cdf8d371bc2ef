#pragma once
// The raw UDP format for FPGA boards: a fixed 40-byte little-endian header, then the samples,
// little-endian, back to back. The one declaration of it (acquisition/udp/README.md explains it
// for board designers).
//
//   off size field
//     0    4  magic          kRawMagic: the bytes 'W' 'R' 'A' 'W'
//     4    1  version        kRawVersion (1)
//     5    1  dtype          RawDtype code below
//     6    2  flags          0 (reserved; receivers ignore unknown bits)
//     8    4  stream_id      which stream of the board (mapped to a channel by the pipeline)
//    12    4  sample_count   samples in this packet (> 0)
//    16    8  sequence       packet number within the stream, +1 per packet (informational)
//    24    8  first_sample   index of the packet's first sample in the stream: what loss,
//                            reordering and block placement are computed from
//    32    8  timestamp_ns   time of the first sample, ns since the Unix epoch (0: none)
//    40       samples        sample_count * size of dtype bytes; the datagram ends there
#include <cstddef>
#include <cstdint>
#include <span>

#include "weir/udp/packet.hpp"

namespace weir::acq {

inline constexpr std::uint32_t kRawMagic = 0x57415257U;   // "WRAW" in memory on a little-endian wire
inline constexpr std::uint8_t kRawVersion = 1;
inline constexpr std::uint32_t kRawHeaderBytes = 40;

/// Sample type codes of the raw header (the same numbers as core::Dtype, fixed here for the wire).
enum class RawDtype : std::uint8_t { i8 = 1, u8, i16, u16, i32, u32, i64, f32, f64, c64 };

/// The fields an encoder writes (the sample count comes from the samples given).
struct RawFields {
  std::uint32_t stream_id = 0;
  std::uint64_t sequence = 0;
  std::uint64_t first_sample = 0;
  std::uint64_t timestamp_ns = 0;
  std::uint16_t flags = 0;
};

/// Reads one datagram in place as a raw packet: length, magic, version, dtype, and that the length
/// is exactly header + sample_count samples (and sample_count > 0). Thread: any. Hot path.
PacketStatus decode_raw(std::span<const std::byte> datagram, PacketView& out) noexcept;

/// Writes header and samples (host order, stored little-endian) into `out`. Returns the bytes
/// written, or 0 when `out` is too small or samples is not a whole number of `dtype` samples.
[[nodiscard]] std::size_t encode_raw(const RawFields& fields, core::Dtype dtype, std::span<const std::byte> samples,
                                     std::span<std::byte> out) noexcept;

}  // namespace weir::acq

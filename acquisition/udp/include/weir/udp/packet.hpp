#pragma once
// What both UDP packet decoders hand back: a view of one datagram read in place (no copy, no
// allocation), or the reason it was refused. Formats: weir/udp/vita49.hpp and weir/udp/raw_packet.hpp.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "weir/core/arena_layout.hpp"

namespace weir::acq {

enum class PacketFormat : std::uint8_t { vita49 = 0, raw = 1 };

/// Why a datagram was refused; counted per reason (`<part>.malformed.<reason>`), never trusted.
enum class [[nodiscard]] PacketStatus : std::uint8_t {
  ok = 0,
  too_short,           // shorter than the header its own fields announce
  bad_magic,           // raw: the first word is not kRawMagic
  bad_version,         // raw: a header version this build does not read
  bad_type,            // VITA 49: not a signal-data packet (type 0 or 1)
  bad_dtype,           // raw: a dtype code that names no sample type
  size_mismatch,       // the size field (VITA words, raw sample count) disagrees with the datagram
  misaligned_payload,  // VITA 49: payload bytes not a whole number of samples of the stream's dtype
  empty_payload,       // no samples
  truncated,           // the datagram was larger than the receive buffer (MSG_TRUNC)
};
inline constexpr std::size_t kPacketStatusCount = 10;  // the enumerators above, ok included

/// "too_short", "bad_magic", ... for keys, messages and JSON ("ok" for ok).
[[nodiscard]] std::string_view packet_status_name(PacketStatus status) noexcept;

/// Bytes of one sample of dtype (0 for a value that names no dtype). Thread: any.
[[nodiscard]] std::uint32_t sample_bytes(core::Dtype dtype) noexcept;
/// The width whose bytes a byte-order change swaps: the sample's, but 4 for c64 (two f32). Thread: any.
[[nodiscard]] std::uint32_t swap_unit_bytes(core::Dtype dtype) noexcept;

/// VITA 49 timestamp kinds (TSI, TSF), as on the wire.
enum class Tsi : std::uint8_t { none = 0, utc = 1, gps = 2, other = 3 };
enum class Tsf : std::uint8_t { none = 0, sample_count = 1, real_time_ps = 2, free_running = 3 };

/// One decoded datagram, pointing into the datagram's bytes: valid while they are.
struct PacketView {
  PacketFormat format = PacketFormat::raw;
  std::uint32_t datagram_bytes = 0;      // the whole datagram, headers included
  std::uint32_t stream_id = 0;           // VITA 49 type 0 (no stream id): 0
  std::uint64_t sequence = 0;            // raw: the 64-bit sequence; VITA 49: the 4-bit count (aliases at 16)
  // raw: the stream index of the first sample, and its time (0: the board sent none)
  std::uint64_t first_sample = 0;
  std::uint64_t timestamp_ns = 0;
  // VITA 49: timestamps as sent
  Tsi tsi = Tsi::none;
  Tsf tsf = Tsf::none;
  std::uint32_t integer_ts = 0;
  std::uint64_t fractional_ts = 0;
  bool has_class_id = false;
  std::uint64_t class_id = 0;            // OUI and class codes, as sent
  bool has_trailer = false;
  std::uint32_t trailer = 0;
  // The samples, in place
  const std::byte* payload = nullptr;
  std::uint32_t payload_bytes = 0;
  std::uint32_t samples = 0;             // payload_bytes / sample size
  core::Dtype dtype = core::Dtype::i16;  // raw: as sent; VITA 49: the stream's (decoder argument)
  bool big_endian = false;               // VITA 49: samples are in network order
};

}  // namespace weir::acq

#pragma once
// VITA 49 (ANSI/VITA 49.0 and the signal-data subset of 49.2) IF/signal data packets: the one
// declaration of how weir reads and writes them. Every word is 32 bits, big-endian (network order).
//
//   word  field                                        present when
//   0     header (bits below)                          always
//   1     stream id                                    packet type 1
//   +2    class id: [0:8] pad/reserved, [8:32] OUI;     C bit
//         information class (16) | packet class (16)
//   +1    integer-seconds timestamp                    TSI != 0
//   +2    fractional timestamp (64 bits, high first)   TSF != 0
//   ...   payload: samples, big-endian, whole words
//   last  trailer                                      T bit
//
//   header: [31:28] packet type (0: signal data without stream id, 1: with it; others refused)
//           [27] C: class id present   [26] T: trailer present   [25:24] reserved (ignored)
//           [23:22] TSI  [21:20] TSF  [19:16] packet count (mod 16)  [15:0] packet size in words
//
// The payload carries no sample count or type: the stream's dtype comes from the pipeline (the
// channel's dtype; i16 real by default), each sample big-endian (a c64 sample: two big-endian
// f32, real first), and the sample count is payload bytes / sample size. Padding samples are not
// supported: a payload that is not a whole number of samples is refused (misaligned_payload).
// The 4-bit count places packets without a fractional timestamp and checks timestamps that jump far
// (it aliases at 16): see weir/udp/stream_assembler.hpp.
#include <cstddef>
#include <cstdint>
#include <span>

#include "weir/udp/packet.hpp"

namespace weir::acq {

inline constexpr std::uint32_t kVitaWordBytes = 4;
inline constexpr std::uint32_t kVitaMaxWords = 0xFFFF;           // the 16-bit size field
inline constexpr std::uint32_t kVitaTypeNoStreamId = 0;
inline constexpr std::uint32_t kVitaTypeWithStreamId = 1;
inline constexpr std::uint32_t kVitaCountModulo = 16;

/// The fields an encoder writes (everything but the payload and the size, which it computes).
struct Vita49Fields {
  bool with_stream_id = true;      // packet type 1 (else 0)
  std::uint32_t stream_id = 0;
  bool with_class_id = false;
  std::uint64_t class_id = 0;
  Tsi tsi = Tsi::none;
  Tsf tsf = Tsf::none;
  std::uint32_t integer_ts = 0;
  std::uint64_t fractional_ts = 0;
  std::uint8_t count = 0;          // only the low 4 bits are sent
  bool with_trailer = false;
  std::uint32_t trailer = 0;
};

/// Header words before the payload for these fields (1 to 7), and after it (0 or 1).
[[nodiscard]] std::uint32_t vita49_prologue_words(const Vita49Fields& fields) noexcept;

/// Reads one datagram in place as a VITA 49 signal-data packet whose samples are `dtype`. Checks the
/// length against the header's own fields and its size field, the packet type, and that the payload
/// is a non-empty whole number of samples; on anything else returns the reason and leaves `out`
/// unspecified. Thread: any. Hot path: no allocation, no throw.
PacketStatus decode_vita49(std::span<const std::byte> datagram, core::Dtype dtype, PacketView& out) noexcept;

/// Writes a packet of `samples` (host-order samples of `dtype`, converted to big-endian here) into
/// `out`. Returns the bytes written, or 0 when `out` is too small, the packet would exceed
/// kVitaMaxWords, or the samples are not a whole number of words. Thread: any. No allocation.
[[nodiscard]] std::size_t encode_vita49(const Vita49Fields& fields, core::Dtype dtype,
                                        std::span<const std::byte> samples, std::span<std::byte> out) noexcept;

}  // namespace weir::acq

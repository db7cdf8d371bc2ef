#pragma once
// The binary WebSocket frames of `weir serve`, little-endian, a 56-byte header then float32 data:
//
//   off size
//     0   4  magic 0x52494557 ("WEIR")
//     4   2  kind: 1 envelope (mins[n] then maxs[n]), 2 spectrum (values[n])
//     6   2  flags: bit 0 triggered, bit 1 drawn from raw samples (not the pyramid), bit 2 some bucket
//              holds no samples (NaN min and max: a gap, lost data, before the first sample)
//     8   4  channel index
//    12   4  n (columns, or elements of a spectrum)
//    16   8  f64 envelope: first sample of column 0   spectrum: axis start
//    24   8  f64 envelope: samples per column         spectrum: axis step
//    32   8  f64 envelope: anchor sample (trigger or end)  spectrum: frame index
//    40   8  u64 CLOCK_MONOTONIC ns of the newest block the frame includes (0: unknown)
//    48   8  u64 envelope: samples covered (n * step)  spectrum: frames seen
//    56      float32 data
#include <cstdint>
#include <span>
#include <string>

namespace weir::serve {

inline constexpr std::uint32_t kFrameMagic = 0x52494557U;
inline constexpr std::size_t kFrameHeaderBytes = 56;

enum class FrameKind : std::uint16_t { envelope = 1, spectrum = 2 };
inline constexpr std::uint16_t kFrameTriggered = 1U << 0;
inline constexpr std::uint16_t kFrameRaw = 1U << 1;
inline constexpr std::uint16_t kFrameGap = 1U << 2;

struct FrameHeader {
  FrameKind kind = FrameKind::envelope;
  std::uint16_t flags = 0;
  std::uint32_t channel = 0;
  double first = 0, step = 1, anchor = 0;
  std::uint64_t newest_monotonic_ns = 0;
  std::uint64_t span = 0;
};

/// Header then mins then maxs (envelope) or header then values (spectrum: maxs empty). Pure.
[[nodiscard]] std::string encode_frame(const FrameHeader& header, std::span<const float> a, std::span<const float> b);

/// Reads a header back; false when bytes are too short or the magic is wrong. Pure.
[[nodiscard]] bool decode_frame_header(std::span<const char> bytes, FrameHeader& out, std::uint32_t& n);

}  // namespace weir::serve

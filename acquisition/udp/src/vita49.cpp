// VITA 49 signal-data packets, read in place and written (weir/udp/vita49.hpp has the layout).
#include "weir/udp/vita49.hpp"

#include <cstring>

#include "weir/udp/detail/bytes.hpp"

namespace weir::acq {

namespace {

constexpr std::uint32_t kTypeShift = 28;
constexpr std::uint32_t kClassBit = 1U << 27;
constexpr std::uint32_t kTrailerBit = 1U << 26;
constexpr std::uint32_t kTsiShift = 22;
constexpr std::uint32_t kTsfShift = 20;
constexpr std::uint32_t kCountShift = 16;
constexpr std::uint32_t kTwoBits = 3;
constexpr std::uint32_t kFourBits = 0xF;
constexpr std::uint32_t kSizeMask = 0xFFFF;

struct Shape {
  std::uint32_t before = 1;  // words before the payload
  std::uint32_t after = 0;   // words after it
};

Shape shape_of(bool stream_id, bool class_id, Tsi tsi, Tsf tsf, bool trailer) noexcept {
  Shape s;
  s.before += stream_id ? 1 : 0;
  s.before += class_id ? 2 : 0;
  s.before += tsi != Tsi::none ? 1 : 0;
  s.before += tsf != Tsf::none ? 2 : 0;
  s.after = trailer ? 1 : 0;
  return s;
}

}  // namespace

std::uint32_t vita49_prologue_words(const Vita49Fields& f) noexcept {
  return shape_of(f.with_stream_id, f.with_class_id, f.tsi, f.tsf, f.with_trailer).before;
}

PacketStatus decode_vita49(std::span<const std::byte> datagram, core::Dtype dtype, PacketView& out) noexcept {
  if (datagram.size() < kVitaWordBytes) return PacketStatus::too_short;
  const std::byte* p = datagram.data();
  const auto header = detail::load_be<std::uint32_t>(p);
  const std::uint32_t type = header >> kTypeShift;
  if (type != kVitaTypeNoStreamId && type != kVitaTypeWithStreamId) return PacketStatus::bad_type;
  out = PacketView{};
  out.datagram_bytes = static_cast<std::uint32_t>(datagram.size());
  out.format = PacketFormat::vita49;
  out.has_class_id = (header & kClassBit) != 0;
  out.has_trailer = (header & kTrailerBit) != 0;
  out.tsi = static_cast<Tsi>((header >> kTsiShift) & kTwoBits);
  out.tsf = static_cast<Tsf>((header >> kTsfShift) & kTwoBits);
  out.sequence = (header >> kCountShift) & kFourBits;
  const std::uint32_t size_words = header & kSizeMask;
  const Shape shape = shape_of(type == kVitaTypeWithStreamId, out.has_class_id, out.tsi, out.tsf, out.has_trailer);
  const std::size_t words = datagram.size() / kVitaWordBytes;
  if (words < shape.before + shape.after) return PacketStatus::too_short;
  if (datagram.size() % kVitaWordBytes != 0 || size_words != words) return PacketStatus::size_mismatch;

  std::size_t at = kVitaWordBytes;
  if (type == kVitaTypeWithStreamId) {
    out.stream_id = detail::load_be<std::uint32_t>(p + at);
    at += kVitaWordBytes;
  }
  if (out.has_class_id) {
    out.class_id = detail::load_be<std::uint64_t>(p + at);
    at += 2 * kVitaWordBytes;
  }
  if (out.tsi != Tsi::none) {
    out.integer_ts = detail::load_be<std::uint32_t>(p + at);
    at += kVitaWordBytes;
  }
  if (out.tsf != Tsf::none) {
    out.fractional_ts = detail::load_be<std::uint64_t>(p + at);
    at += 2 * kVitaWordBytes;
  }
  const std::size_t payload_bytes = (size_words - shape.before - shape.after) * std::size_t{kVitaWordBytes};
  if (out.has_trailer) out.trailer = detail::load_be<std::uint32_t>(p + at + payload_bytes);
  const std::uint32_t one = sample_bytes(dtype);
  if (one == 0) return PacketStatus::bad_dtype;
  if (payload_bytes == 0) return PacketStatus::empty_payload;
  if (payload_bytes % one != 0) return PacketStatus::misaligned_payload;
  out.payload = p + at;
  out.payload_bytes = static_cast<std::uint32_t>(payload_bytes);
  out.samples = static_cast<std::uint32_t>(payload_bytes / one);
  out.dtype = dtype;
  out.big_endian = true;
  return PacketStatus::ok;
}

std::size_t encode_vita49(const Vita49Fields& f, core::Dtype dtype, std::span<const std::byte> samples,
                          std::span<std::byte> out) noexcept {
  const std::uint32_t one = sample_bytes(dtype);
  if (one == 0 || samples.size() % one != 0 || samples.size() % kVitaWordBytes != 0) return 0;
  const Shape shape = shape_of(f.with_stream_id, f.with_class_id, f.tsi, f.tsf, f.with_trailer);
  const std::size_t words = shape.before + shape.after + samples.size() / kVitaWordBytes;
  if (words > kVitaMaxWords || words * kVitaWordBytes > out.size()) return 0;
  std::byte* p = out.data();
  const std::uint32_t type = f.with_stream_id ? kVitaTypeWithStreamId : kVitaTypeNoStreamId;
  const std::uint32_t header = type << kTypeShift | (f.with_class_id ? kClassBit : 0) |
                               (f.with_trailer ? kTrailerBit : 0) |
                               static_cast<std::uint32_t>(f.tsi) << kTsiShift |
                               static_cast<std::uint32_t>(f.tsf) << kTsfShift |
                               (std::uint32_t{f.count} & kFourBits) << kCountShift | static_cast<std::uint32_t>(words);
  detail::store_be(p, header);
  std::size_t at = kVitaWordBytes;
  if (f.with_stream_id) {
    detail::store_be(p + at, f.stream_id);
    at += kVitaWordBytes;
  }
  if (f.with_class_id) {
    detail::store_be(p + at, f.class_id);
    at += 2 * kVitaWordBytes;
  }
  if (f.tsi != Tsi::none) {
    detail::store_be(p + at, f.integer_ts);
    at += kVitaWordBytes;
  }
  if (f.tsf != Tsf::none) {
    detail::store_be(p + at, f.fractional_ts);
    at += 2 * kVitaWordBytes;
  }
  detail::copy_swapped(p + at, samples.data(), samples.size(), swap_unit_bytes(dtype));
  at += samples.size();
  if (f.with_trailer) {
    detail::store_be(p + at, f.trailer);
    at += kVitaWordBytes;
  }
  return at;
}

}  // namespace weir::acq

// The raw format for FPGA boards, read in place and written (weir/udp/raw_packet.hpp has the layout).
#include "weir/udp/raw_packet.hpp"

#include <cstring>

#include "weir/udp/detail/bytes.hpp"

namespace weir::acq {

namespace {
constexpr std::size_t kOffVersion = 4, kOffDtype = 5, kOffFlags = 6, kOffStream = 8, kOffCount = 12;
constexpr std::size_t kOffSequence = 16, kOffFirst = 24, kOffTime = 32;
constexpr std::uint8_t kFirstDtype = static_cast<std::uint8_t>(RawDtype::i8);
constexpr std::uint8_t kLastDtype = static_cast<std::uint8_t>(RawDtype::c64);
static_assert(static_cast<std::uint32_t>(RawDtype::c64) == static_cast<std::uint32_t>(core::Dtype::c64) &&
              static_cast<std::uint32_t>(RawDtype::i8) == static_cast<std::uint32_t>(core::Dtype::i8));
}  // namespace

PacketStatus decode_raw(std::span<const std::byte> datagram, PacketView& out) noexcept {
  if (datagram.size() < kRawHeaderBytes) return PacketStatus::too_short;
  const std::byte* p = datagram.data();
  if (detail::load_le<std::uint32_t>(p) != kRawMagic) return PacketStatus::bad_magic;
  if (detail::load_le<std::uint8_t>(p + kOffVersion) != kRawVersion) return PacketStatus::bad_version;
  const auto code = detail::load_le<std::uint8_t>(p + kOffDtype);
  if (code < kFirstDtype || code > kLastDtype) return PacketStatus::bad_dtype;
  out = PacketView{};
  out.datagram_bytes = static_cast<std::uint32_t>(datagram.size());
  out.format = PacketFormat::raw;
  out.dtype = static_cast<core::Dtype>(code);
  out.stream_id = detail::load_le<std::uint32_t>(p + kOffStream);
  const auto count = detail::load_le<std::uint32_t>(p + kOffCount);
  out.sequence = detail::load_le<std::uint64_t>(p + kOffSequence);
  out.first_sample = detail::load_le<std::uint64_t>(p + kOffFirst);
  out.timestamp_ns = detail::load_le<std::uint64_t>(p + kOffTime);
  if (count == 0) return PacketStatus::empty_payload;
  const std::uint64_t payload = std::uint64_t{count} * sample_bytes(out.dtype);
  if (datagram.size() - kRawHeaderBytes != payload) return PacketStatus::size_mismatch;
  out.payload = p + kRawHeaderBytes;
  out.payload_bytes = static_cast<std::uint32_t>(payload);
  out.samples = count;
  return PacketStatus::ok;
}

std::size_t encode_raw(const RawFields& f, core::Dtype dtype, std::span<const std::byte> samples,
                       std::span<std::byte> out) noexcept {
  const std::uint32_t one = sample_bytes(dtype);
  if (one == 0 || samples.size() % one != 0 || kRawHeaderBytes + samples.size() > out.size()) return 0;
  std::byte* p = out.data();
  detail::store_le(p, kRawMagic);
  detail::store_le(p + kOffVersion, kRawVersion);
  detail::store_le(p + kOffDtype, static_cast<std::uint8_t>(dtype));
  detail::store_le(p + kOffFlags, f.flags);
  detail::store_le(p + kOffStream, f.stream_id);
  detail::store_le(p + kOffCount, static_cast<std::uint32_t>(samples.size() / one));
  detail::store_le(p + kOffSequence, f.sequence);
  detail::store_le(p + kOffFirst, f.first_sample);
  detail::store_le(p + kOffTime, f.timestamp_ns);
  detail::copy_swapped(p + kRawHeaderBytes, samples.data(), samples.size(),
                       std::endian::native == std::endian::little ? 1 : swap_unit_bytes(dtype));
  return kRawHeaderBytes + samples.size();
}

}  // namespace weir::acq

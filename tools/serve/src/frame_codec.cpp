#include "weir/serve/frame_codec.hpp"

#include <bit>
#include <cstring>

namespace weir::serve {

namespace {

static_assert(std::endian::native == std::endian::little, "frames are sent in native order: little-endian only");

template <class T>
void put(std::string& out, std::size_t at, T value) {
  std::memcpy(out.data() + at, &value, sizeof value);
}
template <class T>
T get(std::span<const char> in, std::size_t at) {
  T value;
  std::memcpy(&value, in.data() + at, sizeof value);
  return value;
}

}  // namespace

std::string encode_frame(const FrameHeader& h, std::span<const float> a, std::span<const float> b) {
  std::string out(kFrameHeaderBytes + (a.size() + b.size()) * sizeof(float), '\0');
  put(out, 0, kFrameMagic);
  put(out, 4, static_cast<std::uint16_t>(h.kind));
  put(out, 6, h.flags);
  put(out, 8, h.channel);
  put(out, 12, static_cast<std::uint32_t>(a.size()));
  put(out, 16, h.first);
  put(out, 24, h.step);
  put(out, 32, h.anchor);
  put(out, 40, h.newest_monotonic_ns);
  put(out, 48, h.span);
  if (!a.empty()) std::memcpy(out.data() + kFrameHeaderBytes, a.data(), a.size_bytes());
  if (!b.empty()) std::memcpy(out.data() + kFrameHeaderBytes + a.size_bytes(), b.data(), b.size_bytes());
  return out;
}

bool decode_frame_header(std::span<const char> bytes, FrameHeader& out, std::uint32_t& n) {
  if (bytes.size() < kFrameHeaderBytes || get<std::uint32_t>(bytes, 0) != kFrameMagic) return false;
  out.kind = static_cast<FrameKind>(get<std::uint16_t>(bytes, 4));
  out.flags = get<std::uint16_t>(bytes, 6);
  out.channel = get<std::uint32_t>(bytes, 8);
  n = get<std::uint32_t>(bytes, 12);
  out.first = get<double>(bytes, 16);
  out.step = get<double>(bytes, 24);
  out.anchor = get<double>(bytes, 32);
  out.newest_monotonic_ns = get<std::uint64_t>(bytes, 40);
  out.span = get<std::uint64_t>(bytes, 48);
  return true;
}

}  // namespace weir::serve

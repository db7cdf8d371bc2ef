#include "weir/controls/frame_writer.hpp"

#include <algorithm>
#include <cstring>
#include <ctime>
#include <limits>

#include <fmt/format.h>

namespace weir::controls {

std::int64_t realtime_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

void make_missing_channel(const core::Arena& arena, const core::ChannelSpec& spec) {
  if (!core::find_channel(arena, spec.name)) (void)core::create_channel(arena, spec);
}

core::Result<std::unique_ptr<core::ChannelWriter>> open_writer(const core::Arena& arena, const std::string& part,
                                                               const std::string& what, const std::string& channel) {
  auto w = core::ChannelWriter::open(arena, channel);
  if (!w)
    return core::fail(w.error().code, fmt::format("driver \"{}\": {}: channel '{}': {}", part, what, channel, w.error().what));
  return std::make_unique<core::ChannelWriter>(std::move(*w));
}

FrameWrite write_frame(core::ChannelWriter& writer, std::span<const double> values, std::int64_t stamp_ns) noexcept {
  FrameWrite result;
  const std::uint32_t elements = writer.samples_per_block();
  const auto n = static_cast<std::uint32_t>(std::min<std::size_t>(values.size(), elements));
  result.truncated = values.size() > elements;
  std::span<std::byte> out;
  if (writer.claim(out) != core::ClaimStatus::ok) return result;
  const auto put = [&]<class T>(T* dst) {
    for (std::uint32_t i = 0; i < n; ++i) dst[i] = static_cast<T>(values[i]);
    const T pad = std::numeric_limits<T>::has_quiet_NaN ? std::numeric_limits<T>::quiet_NaN() : T{};
    for (std::uint32_t i = n; i < elements; ++i) dst[i] = pad;
  };
  void* p = out.data();
  switch (writer.desc().dtype) {
    case core::Dtype::f64: put(static_cast<double*>(p)); break;
    case core::Dtype::f32: put(static_cast<float*>(p)); break;
    case core::Dtype::i64: put(static_cast<std::int64_t*>(p)); break;
    case core::Dtype::i32: put(static_cast<std::int32_t*>(p)); break;
    case core::Dtype::u32: put(static_cast<std::uint32_t*>(p)); break;
    case core::Dtype::i16: put(static_cast<std::int16_t*>(p)); break;
    case core::Dtype::u16: put(static_cast<std::uint16_t*>(p)); break;
    case core::Dtype::i8: put(static_cast<std::int8_t*>(p)); break;
    case core::Dtype::u8: put(static_cast<std::uint8_t*>(p)); break;
    case core::Dtype::c64: std::memset(p, 0, out.size()); break;  // refused by the settings
  }
  writer.publish(elements, static_cast<std::uint64_t>(stamp_ns > 0 ? stamp_ns : realtime_ns()));
  result.published = true;
  return result;
}

}  // namespace weir::controls

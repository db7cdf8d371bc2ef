#include "lua_lane.hpp"

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

namespace weir::acq::lua_detail {
namespace {

// Rounds to the nearest code and clips to T's range; NaN becomes 0. Counts a clip in `saturated`.
template <class T>
T to_integer(double value, std::uint64_t& saturated) noexcept {
  constexpr double lo = static_cast<double>(std::numeric_limits<T>::min());
  constexpr double hi = static_cast<double>(std::numeric_limits<T>::max());
  if (std::isnan(value)) {
    ++saturated;
    return 0;
  }
  const double rounded = std::nearbyint(value);
  if (rounded < lo) {
    ++saturated;
    return std::numeric_limits<T>::min();
  }
  // The i64 maximum rounds up to 2^63 as a double, itself out of range: >= there keeps the cast defined.
  if (sizeof(T) == 8 ? rounded >= hi : rounded > hi) {
    ++saturated;
    return std::numeric_limits<T>::max();
  }
  return static_cast<T>(rounded);
}

template <class T>
void store(std::byte* at, T value) noexcept {
  std::memcpy(at, &value, sizeof value);
}

}  // namespace

Lane::Lane(core::ChannelWriter writer, std::string name, double rate_hz, bool created)
    : writer_(std::move(writer)),
      dtype_(writer_.desc().dtype),
      sample_bytes_(core::dtype_bytes(dtype_)),
      block_(writer_.samples_per_block()),
      rate_hz_(rate_hz) {
  report_.name = std::move(name);
  report_.created = created;
}

void Lane::push(double value, std::uint64_t realtime_ns, std::uint64_t monotonic_ns) noexcept {
  ++report_.samples;
  if (!claimed_ && discard_ == 0) {
    switch (writer_.claim(slot_)) {
      case core::ClaimStatus::ok:
        claimed_ = true;
        filled_ = 0;
        block_realtime_ns_ = realtime_ns;
        block_monotonic_ns_ = monotonic_ns;
        break;
      case core::ClaimStatus::dropped:
        ++report_.blocks_dropped;
        discard_ = block_;
        break;
    }
  }
  if (discard_ > 0) {
    --discard_;
    ++report_.samples_dropped;
    return;
  }
  std::byte* at = slot_.data() + std::size_t{filled_} * sample_bytes_;
  switch (dtype_) {
    case core::Dtype::f32: store(at, static_cast<float>(value)); break;
    case core::Dtype::f64: store(at, value); break;
    case core::Dtype::i8: store(at, to_integer<std::int8_t>(value, report_.saturated)); break;
    case core::Dtype::u8: store(at, to_integer<std::uint8_t>(value, report_.saturated)); break;
    case core::Dtype::i16: store(at, to_integer<std::int16_t>(value, report_.saturated)); break;
    case core::Dtype::u16: store(at, to_integer<std::uint16_t>(value, report_.saturated)); break;
    case core::Dtype::i32: store(at, to_integer<std::int32_t>(value, report_.saturated)); break;
    case core::Dtype::u32: store(at, to_integer<std::uint32_t>(value, report_.saturated)); break;
    case core::Dtype::i64: store(at, to_integer<std::int64_t>(value, report_.saturated)); break;
    case core::Dtype::c64: store(at, std::array<float, 2>{static_cast<float>(value), 0.0F}); break;  // refused at start
  }
  if (++filled_ == block_) {
    writer_.publish(block_, block_realtime_ns_, block_monotonic_ns_);
    claimed_ = false;
    ++report_.blocks_published;
  }
}

void Lane::flush() noexcept {
  if (!claimed_ || filled_ == 0) return;
  writer_.publish(filled_, block_realtime_ns_, block_monotonic_ns_);
  claimed_ = false;
  ++report_.blocks_published;
}

void Lane::miss(std::uint64_t calls, core::GapReason reason) noexcept {
  if (calls == 0) return;
  flush();
  discard_ = 0;  // a dropped block ends here too: the next sample starts a new one
  writer_.skip(calls, reason);
  report_.gap_blocks += calls;
}

}  // namespace weir::acq::lua_detail

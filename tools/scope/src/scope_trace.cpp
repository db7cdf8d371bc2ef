// Recent samples of a channel as floats: dtype conversion, a contiguous history, trigger search.
#include "weir/scope/scope_trace.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace weir::scope {

namespace {

template <class T>
float load_as_float(const std::byte* data, std::size_t i) noexcept {
  T v;
  std::memcpy(&v, data + i * sizeof(T), sizeof(T));
  return static_cast<float>(v);
}

}  // namespace

float sample_as_float(core::Dtype dtype, const std::byte* data, std::size_t i) noexcept {
  switch (dtype) {
    case core::Dtype::i8: return load_as_float<std::int8_t>(data, i);
    case core::Dtype::u8: return load_as_float<std::uint8_t>(data, i);
    case core::Dtype::i16: return load_as_float<std::int16_t>(data, i);
    case core::Dtype::u16: return load_as_float<std::uint16_t>(data, i);
    case core::Dtype::i32: return load_as_float<std::int32_t>(data, i);
    case core::Dtype::u32: return load_as_float<std::uint32_t>(data, i);
    case core::Dtype::i64: return load_as_float<std::int64_t>(data, i);
    case core::Dtype::f32: return load_as_float<float>(data, i);
    case core::Dtype::f64: return load_as_float<double>(data, i);
    case core::Dtype::c64: return load_as_float<float>(data, 2 * i);  // real part of (re, im) float pairs
  }
  return std::numeric_limits<float>::quiet_NaN();
}

SampleHistory::SampleHistory(std::size_t capacity)
    : buf_(std::bit_ceil(std::max<std::size_t>(capacity, 1)), 0.0F), mask_(buf_.size() - 1) {}

void SampleHistory::append(std::uint64_t first, std::span<const float> values) {
  if (first != end_ || begin_ == end_) begin_ = end_ = first;  // a gap (a skipped or torn block): start over
  for (const float v : values) buf_[end_++ & mask_] = v;
  begin_ = std::max(begin_, end_ > buf_.size() ? end_ - buf_.size() : 0);
}

void SampleHistory::envelope(std::uint64_t first, std::uint64_t count, std::span<float> mins,
                             std::span<float> maxs) const noexcept {
  const std::size_t columns = std::min(mins.size(), maxs.size());
  std::fill(mins.begin(), mins.end(), std::numeric_limits<float>::quiet_NaN());
  std::fill(maxs.begin(), maxs.end(), std::numeric_limits<float>::quiet_NaN());
  if (columns == 0 || !covers(first, count)) return;
  for (std::uint64_t i = 0; i < count; ++i) {
    const auto column = static_cast<std::size_t>(i * columns / count);
    const float v = at(first + i);
    mins[column] = std::isnan(mins[column]) ? v : std::min(mins[column], v);
    maxs[column] = std::isnan(maxs[column]) ? v : std::max(maxs[column], v);
  }
}

std::optional<std::uint64_t> SampleHistory::last_crossing(float level, std::uint64_t first,
                                                          std::uint64_t last) const noexcept {
  first = std::max(first, begin_ + 1);  // a crossing needs the sample before it
  last = std::min(last, end_ == 0 ? 0 : end_ - 1);
  for (std::uint64_t s = last; s >= first && s > 0; --s) {
    if (at(s - 1) < level && at(s) >= level) return s;
  }
  return std::nullopt;
}

}  // namespace weir::scope

// One switch per call, then a plain loop per type: the per-sample loop has no dispatch.
#include "weir/dsp/sample_convert.hpp"

#include <algorithm>
#include <cstring>

namespace weir::dsp {

namespace {

template <class T, class Out>
void convert(const void* block, std::size_t first, std::span<Out> out) noexcept {
  const auto* bytes = static_cast<const std::byte*>(block) + first * sizeof(T);
  for (std::size_t i = 0; i < out.size(); ++i) {
    T value;
    std::memcpy(&value, bytes + i * sizeof(T), sizeof(T));  // a slot is raw bytes: no alignment assumed
    out[i] = static_cast<Out>(value);
  }
}

template <class Out>
void convert_any(core::Dtype dtype, const void* block, std::size_t first, std::span<Out> out) noexcept {
  switch (dtype) {
    case core::Dtype::i8: convert<std::int8_t>(block, first, out); return;
    case core::Dtype::u8: convert<std::uint8_t>(block, first, out); return;
    case core::Dtype::i16: convert<std::int16_t>(block, first, out); return;
    case core::Dtype::u16: convert<std::uint16_t>(block, first, out); return;
    case core::Dtype::i32: convert<std::int32_t>(block, first, out); return;
    case core::Dtype::u32: convert<std::uint32_t>(block, first, out); return;
    case core::Dtype::i64: convert<std::int64_t>(block, first, out); return;
    case core::Dtype::f32: convert<float>(block, first, out); return;
    case core::Dtype::f64: convert<double>(block, first, out); return;
    case core::Dtype::c64: break;  // refused at configure
  }
  std::fill(out.begin(), out.end(), Out{0});
}

}  // namespace

bool is_real_dtype(core::Dtype dtype) noexcept {
  const auto code = static_cast<std::uint32_t>(dtype);
  return code >= static_cast<std::uint32_t>(core::Dtype::i8) && code <= static_cast<std::uint32_t>(core::Dtype::f64);
}

void to_float(core::Dtype dtype, const void* block, std::size_t first, std::span<float> out) noexcept {
  convert_any(dtype, block, first, out);
}

void to_double(core::Dtype dtype, const void* block, std::size_t first, std::span<double> out) noexcept {
  convert_any(dtype, block, first, out);
}

}  // namespace weir::dsp

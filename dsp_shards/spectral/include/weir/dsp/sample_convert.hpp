#pragma once
// Arena samples (any real dtype, raw bytes in place) to float, the type every filter here runs on.
#include <cstddef>
#include <cstdint>
#include <span>

#include "weir/core/arena_layout.hpp"

namespace weir::dsp {

/// Whether dtype holds real samples this family reads: i8..i64 and f32, f64; not c64.
[[nodiscard]] bool is_real_dtype(core::Dtype dtype) noexcept;

/// Bit (1 << dtype) for every real dtype: the input_dtypes of the family's shards.
[[nodiscard]] constexpr std::uint32_t real_dtype_mask() noexcept {
  std::uint32_t mask = 0;
  for (auto code = static_cast<std::uint32_t>(core::Dtype::i8); code <= static_cast<std::uint32_t>(core::Dtype::f64);
       ++code)
    mask |= 1U << code;
  return mask;
}

/// Converts samples [first, first + out.size()) of a block of `dtype` at `block` (raw bytes, any
/// alignment) to float. Integer ADC codes convert by value, unscaled; f64 rounds to nearest.
/// Requires: is_real_dtype(dtype); the block holds that many samples. Hot path: no allocation.
/// Thread: any.
void to_float(core::Dtype dtype, const void* block, std::size_t first, std::span<float> out) noexcept;

}  // namespace weir::dsp

#pragma once
// Arena samples (any real dtype, raw bytes in place) to float or double, for every built-in shard:
// the filters run on float, the event statistics on double.
#include <cstddef>
#include <cstdint>
#include <span>

#include "weir/core/arena_layout.hpp"

namespace weir::dsp {

/// Whether dtype holds real samples the built-in shards read: i8..i64 and f32, f64; not c64.
/// Thread: any.
[[nodiscard]] bool is_real_dtype(core::Dtype dtype) noexcept;

/// Bit (1 << dtype) for every real dtype: the input_dtypes of the built-in shards that read samples.
[[nodiscard]] constexpr std::uint32_t real_dtype_mask() noexcept {
  std::uint32_t mask = 0;
  for (auto code = static_cast<std::uint32_t>(core::Dtype::i8); code <= static_cast<std::uint32_t>(core::Dtype::f64);
       ++code)
    mask |= 1U << code;
  return mask;
}

/// real_dtype_mask() as a constant, for weir_shard_api tables.
inline constexpr std::uint32_t kRealDtypes = real_dtype_mask();

/// Converts samples [first, first + out.size()) of a block of `dtype` at `block` (raw bytes, any
/// alignment) to float. Integer ADC codes convert by value, unscaled; f64 rounds to nearest.
/// Requires: is_real_dtype(dtype); the block holds that many samples (otherwise `out` is zeroed).
/// Hot path: no allocation. Thread: any.
void to_float(core::Dtype dtype, const void* block, std::size_t first, std::span<float> out) noexcept;

/// As to_float, to double: every real dtype but i64 and u64 beyond 2^53 converts exactly.
void to_double(core::Dtype dtype, const void* block, std::size_t first, std::span<double> out) noexcept;

}  // namespace weir::dsp

#pragma once
// Shapes of declared outputs (shard ABI version 2): a channel output made of frames with an axis
// along each frame's elements, and a key output holding a typed array. A shard declares the output
// as before (name, kind, dtype, rate, block size) and then gives it its shape with one call here.
#include <cstdint>
#include <span>
#include <string_view>

#include "weir/core/error.hpp"
#include "weir/shard.h"

namespace weir::dsp {

/// The axis of a frame's elements: element i sits at start + i * step, in `units`.
struct OutputAxis {
  std::string_view name;   // e.g. "frequency"; at most 31 bytes
  std::string_view units;  // e.g. "Hz"; at most 31 bytes
  double start = 0.0;
  double step = 1.0;
};

/// Makes channel output `out` a frame channel: each block holds samples_per_block / frame_elements
/// frames of frame_elements elements along `axis`. Fails (out untouched) when out is not a channel,
/// frame_elements is 0 or does not divide samples_per_block, a text does not fit its field, or start
/// or step is not finite. Thread: control.
[[nodiscard]] core::Result<void> set_frames(weir_shard_output& out, std::uint32_t frame_elements,
                                            const OutputAxis& axis);

/// Makes key output `out` a WEIR_KEY_ARRAY key of `dims` (rank 1 or 2) elements of `dtype`; sets
/// its max_bytes to the shape's bytes, which set_key must then write exactly. Fails (out untouched)
/// when out is not a key, dtype is unknown, the rank is not 1 or 2, or a dimension is 0.
/// Thread: control.
[[nodiscard]] core::Result<void> set_array(weir_shard_output& out, std::uint32_t dtype,
                                           std::span<const std::uint32_t> dims);

/// The bytes of one element of ABI dtype `dtype` (c64: 8); 0 for an unknown dtype. Thread: any.
[[nodiscard]] std::uint32_t abi_dtype_bytes(std::uint32_t dtype) noexcept;

}  // namespace weir::dsp

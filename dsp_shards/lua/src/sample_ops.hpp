#pragma once
// Per-dtype sample access for the view: picked once at configure, so the hot path never switches
// on the input's dtype.
#include <cstdint>

struct lua_State;

namespace weir::dsp::lua {

struct SampleOps {
  const char* dtype_name;  // "i16", "f32", ...
  // Pushes samples[i]: a Lua integer for integer dtypes, a float for f32/f64.
  void (*push)(lua_State* L, const void* samples, std::uint32_t i);
  double (*sum)(const void* samples, std::uint32_t count);
  // Index of the largest / smallest sample; NaNs lose to any number. Requires: count > 0.
  std::uint32_t (*argmax)(const void* samples, std::uint32_t count);
  std::uint32_t (*argmin)(const void* samples, std::uint32_t count);
  void (*to_f32)(const void* samples, std::uint32_t count, float* out);
};

/// The operations for a weir_dtype, or nullptr for one the view cannot read (c64, unknown).
/// Thread: any.
const SampleOps* sample_ops(std::uint32_t dtype) noexcept;

}  // namespace weir::dsp::lua

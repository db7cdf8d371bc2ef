#pragma once
// The channel writer's level-0 pyramid kernel: the min and max of each run of kPyramidFactor floats,
// in three code paths (AVX-512, AVX2, portable) picked once at load. Private to core.
#include <cstddef>

namespace weir::core::detail {

/// lo[e] and hi[e] become the min and max of x[Fe .. Fe+F-1] (F = kPyramidFactor), for e < entries.
/// A NaN sample may or may not be ignored (as minps/maxps do). Hot path: no allocation, no branches
/// on the data.
void entry_ranges(const float* x, std::size_t entries, float* lo, float* hi) noexcept;

/// Each path on its own, for tests; the AVX ones require the CPU to have the feature
/// (cpu_features.hpp).
void entry_ranges_portable(const float* x, std::size_t entries, float* lo, float* hi) noexcept;
void entry_ranges_avx2(const float* x, std::size_t entries, float* lo, float* hi) noexcept;
void entry_ranges_avx512(const float* x, std::size_t entries, float* lo, float* hi) noexcept;

}  // namespace weir::core::detail

#pragma once
// Which vector extensions this CPU (and its OS) offers, for the kernels picked at run time. Private to core.

namespace weir::core::detail {

/// AVX2 and FMA, with the OS saving ymm state.
[[nodiscard]] inline bool cpu_has_avx2_fma() noexcept {
  __builtin_cpu_init();  // idempotent; needed only if called before libgcc's own constructor ran
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");  // both also check OS ymm state
}

/// AVX-512F, with the OS saving zmm state.
[[nodiscard]] inline bool cpu_has_avx512f() noexcept {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");  // also checks that the OS saves zmm state
}

}  // namespace weir::core::detail

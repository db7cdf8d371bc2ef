#pragma once
// The one audited place where seqlocked bytes are copied without atomics. A reader's copy may race
// with a writer; the epoch re-check after an acquire fence discards any such copy (Boehm 2012, the
// kernel's and folly's seqlocks). TSan is told about exactly these functions (tests/tsan.supp).
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SANITIZE_THREAD__)
#define WEIR_SEQLOCK_COPY __attribute__((noinline)) inline
#else
#define WEIR_SEQLOCK_COPY inline
#endif

namespace weir::core::detail {

WEIR_SEQLOCK_COPY void seqlock_copy_out(void* dst, const void* src, std::size_t n) noexcept { std::memcpy(dst, src, n); }
/// Copies a small value (at most kSmallCopyBytes) with one fixed-size copy, which compiles to a few
/// vector moves instead of a call. Requires: dst and src each have kSmallCopyBytes readable/writable
/// bytes (value areas are rounded up to 64 bytes; the caller checks its own buffer).
inline constexpr std::size_t kSmallCopyBytes = 64;
WEIR_SEQLOCK_COPY void seqlock_copy_out_small(void* dst, const void* src) noexcept {
  std::memcpy(dst, src, kSmallCopyBytes);
}
WEIR_SEQLOCK_COPY void seqlock_copy_in(void* dst, const void* src, std::size_t n) noexcept { std::memcpy(dst, src, n); }
WEIR_SEQLOCK_COPY bool seqlock_equal(const void* a, const void* b, std::size_t n) noexcept {
  const auto* x = static_cast<const unsigned char*>(a);
  const auto* y = static_cast<const unsigned char*>(b);
  if (n <= 16 && n >= 8) {  // the common short key: two overlapping 8-byte compares, no call
    std::uint64_t x0, y0, x1, y1;
    std::memcpy(&x0, x, 8);
    std::memcpy(&y0, y, 8);
    std::memcpy(&x1, x + n - 8, 8);
    std::memcpy(&y1, y + n - 8, 8);
    return ((x0 ^ y0) | (x1 ^ y1)) == 0;
  }
  return std::memcmp(x, y, n) == 0;
}

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace weir::core::detail

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
WEIR_SEQLOCK_COPY void seqlock_copy_in(void* dst, const void* src, std::size_t n) noexcept { std::memcpy(dst, src, n); }
WEIR_SEQLOCK_COPY bool seqlock_equal(const void* a, const void* b, std::size_t n) noexcept {
  return std::memcmp(a, b, n) == 0;
}

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace weir::core::detail

// malloc interposition: the executable's definitions win over libc's for every library in the
// process (FFTW included), and forward to glibc's internal entry points.
#include "alloc_counter.hpp"

#include <cerrno>
#include <cstddef>
#include <cstdlib>

#include <atomic>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define WEIR_TEST_COUNT_ALLOCATIONS 0
#else
#define WEIR_TEST_COUNT_ALLOCATIONS 1
#endif

namespace {

std::atomic<int> armed{0};         // probes alive
std::atomic<long> allocations{0};  // while armed

}  // namespace

#if WEIR_TEST_COUNT_ALLOCATIONS
namespace {

void note() noexcept {
  if (armed.load(std::memory_order_relaxed) > 0) allocations.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

extern "C" {
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t count, std::size_t size);
void* __libc_realloc(void* p, std::size_t size);
void* __libc_memalign(std::size_t alignment, std::size_t size);
void __libc_free(void* p);

void* malloc(std::size_t size) noexcept {
  note();
  return __libc_malloc(size);
}
void* calloc(std::size_t count, std::size_t size) noexcept {
  note();
  return __libc_calloc(count, size);
}
void* realloc(void* p, std::size_t size) noexcept {
  note();
  return __libc_realloc(p, size);
}
void* memalign(std::size_t alignment, std::size_t size) noexcept {
  note();
  return __libc_memalign(alignment, size);
}
void* aligned_alloc(std::size_t alignment, std::size_t size) noexcept {
  note();
  return __libc_memalign(alignment, size);
}
int posix_memalign(void** out, std::size_t alignment, std::size_t size) noexcept {
  note();
  void* p = __libc_memalign(alignment, size);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}
void free(void* p) noexcept { __libc_free(p); }
}
#endif

namespace weir::test {

bool counting_allocations() noexcept { return WEIR_TEST_COUNT_ALLOCATIONS != 0; }

AllocationProbe::AllocationProbe() noexcept : start_(allocations.load(std::memory_order_relaxed)) {
  armed.fetch_add(1, std::memory_order_relaxed);
}

AllocationProbe::~AllocationProbe() { armed.fetch_sub(1, std::memory_order_relaxed); }

long AllocationProbe::count() const noexcept { return allocations.load(std::memory_order_relaxed) - start_; }

}  // namespace weir::test

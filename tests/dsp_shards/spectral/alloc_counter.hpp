#pragma once
// Counts heap allocations, so tests can show a hot path makes none. malloc and its relatives are
// interposed for the whole test program (alloc_counter.cpp); FFTW's own allocations go through
// them too. Sanitizer builds own malloc themselves, and there nothing is counted.

namespace weir::test {

/// Whether this build counts allocations at all.
[[nodiscard]] bool counting_allocations() noexcept;

/// Counts every allocation any thread makes while it lives. Tests here are single-threaded.
class AllocationProbe {
 public:
  AllocationProbe() noexcept;
  AllocationProbe(const AllocationProbe&) = delete;
  AllocationProbe& operator=(const AllocationProbe&) = delete;
  ~AllocationProbe();
  [[nodiscard]] long count() const noexcept;

 private:
  long start_;
};

}  // namespace weir::test

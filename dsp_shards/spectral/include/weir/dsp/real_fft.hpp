#pragma once
// One planned N-point real-to-complex FFT (FFTW, single precision) with its own SIMD-aligned
// buffers. Planning is the cold path; execute() is the hot path.
#include <complex>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "weir/core/error.hpp"

struct fftwf_plan_s;  // FFTW's own tag for fftwf_plan: keeps <fftw3.h> out of this header

namespace weir::dsp {

/// FFTW planner rigour: estimate plans instantly; measure times real transforms (the default;
/// tens of ms for a few thousand points, seconds for a million, unless wisdom has it already).
enum class PlanEffort : std::uint8_t { estimate, measure, patient };

struct WisdomOptions {
  bool use = true;   // import before planning and export after
  std::string path;  // empty: default_wisdom_path()
};

/// What planning did with wisdom, for the caller to report if it cares.
struct WisdomReport {
  std::string path;      // the file used, empty when wisdom was off or no path could be found
  bool imported = false; // a wisdom file was read before planning
  bool exported = false; // the wisdom file was (re)written after planning
  std::string problem;   // why not, when something went wrong; planning succeeded regardless
};

/// The largest prime factor of n (1 for n < 2). Thread: any.
[[nodiscard]] std::size_t largest_prime_factor(std::size_t n) noexcept;

/// Whether execute() of an n-point plan runs without touching the heap: n's prime factors are all
/// at most kMaxFftPrimeFactor (FFTW's own "fast sizes" 2^a 3^b 5^c 7^d 11^e 13^f). For larger
/// primes FFTW's Rader and buffered solvers malloc scratch on every execute (measured on FFTW
/// 3.3.10: first at n = 74 = 2 * 37 with FFTW_ESTIMATE). Thread: any.
[[nodiscard]] bool is_allocation_free_size(std::size_t n) noexcept;

/// The smallest even n' >= n that is_allocation_free_size, for suggestions in errors. Thread: any.
[[nodiscard]] std::size_t next_allocation_free_size(std::size_t n) noexcept;

class RealFft {
 public:
  /// Plans an n-point r2c transform. Requires nothing; fails naming n when it is below 2 or above
  /// INT_MAX, when aligned buffers cannot be had, or when FFTW cannot plan.
  /// Thread: any; planners in one process are serialised by a lock (FFTW's planner is not
  /// thread-safe), execute() of distinct plans may run in parallel.
  [[nodiscard]] static core::Result<RealFft> create(std::size_t n, PlanEffort effort, const WisdomOptions& wisdom);

  RealFft(RealFft&& other) noexcept;
  RealFft& operator=(RealFft&& other) noexcept;
  RealFft(const RealFft&) = delete;
  RealFft& operator=(const RealFft&) = delete;
  ~RealFft();

  /// The n real inputs; fill before execute(). execute() may overwrite them.
  [[nodiscard]] std::span<float> input() noexcept { return {in_, n_}; }
  /// The n/2+1 complex outputs of the last execute(): bin k at k * fs / n.
  [[nodiscard]] std::span<const std::complex<float>> output() const noexcept { return {out_, n_ / 2 + 1}; }
  /// Hot path: no allocation, no lock. Thread: the owner.
  void execute() noexcept;

  [[nodiscard]] std::size_t size() const noexcept { return n_; }
  [[nodiscard]] const WisdomReport& wisdom() const noexcept { return wisdom_; }

 private:
  RealFft() = default;
  void release() noexcept;

  fftwf_plan_s* plan_ = nullptr;
  float* in_ = nullptr;               // fftwf_malloc'd, n_ floats
  std::complex<float>* out_ = nullptr; // fftwf_malloc'd, n_/2+1; layout-compatible with fftwf_complex
  std::size_t n_ = 0;
  WisdomReport wisdom_;
};

}  // namespace weir::dsp

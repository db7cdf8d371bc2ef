// FFTW handles stay inside this file: the plan and both buffers are released together.
#include "weir/dsp/real_fft.hpp"

#include <fftw3.h>

#include <algorithm>
#include <climits>
#include <mutex>
#include <utility>

#include "fftw_lock.hpp"
#include "weir/dsp/spectral_limits.hpp"
#include "weir/dsp/wisdom.hpp"

namespace weir::dsp {

namespace detail {

std::mutex& fftw_planner_mutex() noexcept {
  static std::mutex mutex;
  return mutex;
}

}  // namespace detail

namespace {

unsigned planner_flags(PlanEffort effort) noexcept {
  switch (effort) {
    case PlanEffort::estimate: return FFTW_ESTIMATE | FFTW_DESTROY_INPUT;
    case PlanEffort::measure: return FFTW_MEASURE | FFTW_DESTROY_INPUT;
    case PlanEffort::patient: return FFTW_PATIENT | FFTW_DESTROY_INPUT;
  }
  return FFTW_MEASURE | FFTW_DESTROY_INPUT;
}

}  // namespace

std::size_t largest_prime_factor(std::size_t n) noexcept {
  std::size_t largest = 1;
  for (std::size_t d = 2; d * d <= n; ++d)
    while (n % d == 0) {
      largest = d;
      n /= d;
    }
  return n > 1 ? std::max(largest, n) : largest;
}

bool is_allocation_free_size(std::size_t n) noexcept { return largest_prime_factor(n) <= kMaxFftPrimeFactor; }

std::size_t next_allocation_free_size(std::size_t n) noexcept {
  std::size_t m = std::max<std::size_t>(n, 2);
  while (m % 2 != 0 || !is_allocation_free_size(m)) ++m;  // 13-smooth numbers are dense: a short walk
  return m;
}

core::Result<RealFft> RealFft::create(std::size_t n, PlanEffort effort, const WisdomOptions& wisdom) {
  if (n < 2 || n > static_cast<std::size_t>(INT_MAX))
    return core::fail(core::Errc::invalid_argument,
                      "fft: size " + std::to_string(n) + " is out of range; use 2 .. " + std::to_string(INT_MAX));
  RealFft fft;
  fft.n_ = n;
  fft.in_ = fftwf_alloc_real(n);
  fft.out_ = reinterpret_cast<std::complex<float>*>(fftwf_alloc_complex(n / 2 + 1));
  if (fft.in_ == nullptr || fft.out_ == nullptr)
    return core::fail(core::Errc::invalid_argument, "fft: no memory for buffers of size " + std::to_string(n));

  if (wisdom.use) {
    if (!wisdom.path.empty()) {
      fft.wisdom_.path = wisdom.path;
    } else if (auto path = default_wisdom_path()) {
      fft.wisdom_.path = *path;
    } else {
      fft.wisdom_.problem = path.error().what;
    }
    if (!fft.wisdom_.path.empty()) fft.wisdom_.imported = import_wisdom(fft.wisdom_.path);
  }
  {
    const std::lock_guard lock(detail::fftw_planner_mutex());
    fft.plan_ = fftwf_plan_dft_r2c_1d(static_cast<int>(n), fft.in_, reinterpret_cast<fftwf_complex*>(fft.out_),
                                      planner_flags(effort));
  }
  if (fft.plan_ == nullptr)
    return core::fail(core::Errc::invalid_argument,
                      "fft: FFTW cannot plan a real transform of size " + std::to_string(n));
  if (!fft.wisdom_.path.empty()) {
    if (auto saved = export_wisdom(fft.wisdom_.path))
      fft.wisdom_.exported = true;
    else
      fft.wisdom_.problem = saved.error().what;  // planning worked; a read-only cache only costs time later
  }
  return fft;
}

RealFft::RealFft(RealFft&& other) noexcept
    : plan_(std::exchange(other.plan_, nullptr)),
      in_(std::exchange(other.in_, nullptr)),
      out_(std::exchange(other.out_, nullptr)),
      n_(std::exchange(other.n_, 0)),
      wisdom_(std::move(other.wisdom_)) {}

RealFft& RealFft::operator=(RealFft&& other) noexcept {
  if (this != &other) {
    release();
    plan_ = std::exchange(other.plan_, nullptr);
    in_ = std::exchange(other.in_, nullptr);
    out_ = std::exchange(other.out_, nullptr);
    n_ = std::exchange(other.n_, 0);
    wisdom_ = std::move(other.wisdom_);
  }
  return *this;
}

RealFft::~RealFft() { release(); }

void RealFft::release() noexcept {
  if (plan_ != nullptr) {
    const std::lock_guard lock(detail::fftw_planner_mutex());
    fftwf_destroy_plan(plan_);
    plan_ = nullptr;
  }
  fftwf_free(in_);
  fftwf_free(out_);
  in_ = nullptr;
  out_ = nullptr;
}

void RealFft::execute() noexcept { fftwf_execute(plan_); }

}  // namespace weir::dsp

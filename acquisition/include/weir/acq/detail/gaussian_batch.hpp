#pragma once
// Gaussian noise in batches, for the signal generator: xoshiro256+ in eight independent lanes and
// a Box-Muller transform in float with the generator's own log, sin and cos (polynomials, about
// 1e-7 relative error), all in lane loops the compiler vectorises (SSE2, AVX2 or AVX-512, picked
// at load time). Batches are always made whole, so the n-th normal depends only on the seed, not
// on how the caller takes them. Tails reach 6.6 sigma (31-bit uniforms for the radius).
#include <array>
#include <cstddef>
#include <cstdint>

namespace weir::acq::detail {

class GaussianBatch {
 public:
  static constexpr std::size_t kLanes = 8;        // independent xoshiro256+ generators
  static constexpr std::size_t kBatch = 1024;     // normals made per refill: 2 per 64-bit draw

  /// Seeds the lanes from `seed` through splitmix64. Thread: one owner.
  explicit GaussianBatch(std::uint64_t seed) noexcept;

  /// The next N(0, 1) sample. Hot path: no allocation. Thread: the owner.
  float next() noexcept {
    if (at_ == kBatch) refill();
    return batch_[at_++];
  }

  /// Up to `want` next samples at once, in place in the batch: returns how many are at `*out`
  /// (at least 1 when want > 0). Hot path. Thread: the owner.
  std::size_t take(std::size_t want, const float** out) noexcept {
    if (at_ == kBatch) refill();
    const std::size_t n = want < kBatch - at_ ? want : kBatch - at_;
    *out = batch_.data() + at_;
    at_ += n;
    return n;
  }

 private:
  void refill() noexcept;

  alignas(64) std::array<std::uint64_t, 4 * kLanes> state_{};  // word w of lane l at w * kLanes + l
  alignas(64) std::array<float, kBatch> batch_{};
  std::size_t at_ = kBatch;
};

}  // namespace weir::acq::detail

#include "weir/acq/detail/gaussian_batch.hpp"

#include <bit>
#include <cmath>

#include "weir/core/target_clones.hpp"

namespace weir::acq::detail {

namespace {

constexpr float kTwo31 = 0x1.0p-31F;   // 31 random bits -> (0, 1) with the half offset
constexpr float kTwo24 = 0x1.0p-24F;   // 24 random bits -> [0, 1)
constexpr float kLn2 = 0.693147180559945309F;
constexpr float kHalfPi = 1.57079632679489662F;

std::uint64_t splitmix64(std::uint64_t& x) noexcept {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// ln(x) for x in (0, 1]: x = m 2^e with m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s), s = (m-1)/(m+1),
// |s| <= 0.172, by its series to s^9 (next term < 3e-10). Integer arithmetic on the bits finds e
// and m with no branch or select, so the lane loop vectorises with any extension.
[[gnu::always_inline]] inline float log_unit(float x) noexcept {
  constexpr std::int32_t kSqrtHalfBits = 0x3F3504F3;  // sqrt(1/2)
  const std::int32_t i = std::bit_cast<std::int32_t>(x) - kSqrtHalfBits;
  const std::int32_t e = i >> 23;  // arithmetic shift: floor
  const float m = std::bit_cast<float>((i & 0x7FFFFF) + kSqrtHalfBits);
  const float s = (m - 1.0F) / (m + 1.0F);
  const float s2 = s * s;
  const float series = 1.0F + s2 * (1.0F / 3 + s2 * (1.0F / 5 + s2 * (1.0F / 7 + s2 * (1.0F / 9))));
  return static_cast<float>(e) * kLn2 + 2.0F * s * series;
}

WEIR_TARGET_CLONES void refill_lanes(std::uint64_t* __restrict state,
                                                                       float* __restrict out) noexcept {
  constexpr std::size_t L = GaussianBatch::kLanes;
  std::uint64_t s0[L], s1[L], s2[L], s3[L];  // local: no aliasing with out, kept in registers
  for (std::size_t l = 0; l < L; ++l) {
    s0[l] = state[l];
    s1[l] = state[L + l];
    s2[l] = state[2 * L + l];
    s3[l] = state[3 * L + l];
  }
  for (std::size_t at = 0; at < GaussianBatch::kBatch; at += 2 * L) {
    for (std::size_t l = 0; l < L; ++l) {
      // xoshiro256+: the top bits are the strong ones; both uniforms come from bits 8 and up.
      const std::uint64_t r = s0[l] + s3[l];
      const std::uint64_t t = s1[l] << 17;
      s2[l] ^= s0[l];
      s3[l] ^= s1[l];
      s1[l] ^= s2[l];
      s0[l] ^= s3[l];
      s2[l] ^= t;
      s3[l] = (s3[l] << 45) | (s3[l] >> 19);
      const float u = (static_cast<float>(static_cast<std::int32_t>(r >> 33)) + 0.5F) * kTwo31;  // (0, 1)
      const float f = static_cast<float>(static_cast<std::int32_t>((r >> 8) & 0xFFFFFF)) * kTwo24;  // [0, 1)
      const float radius = std::sqrt(-2.0F * log_unit(u));
      // angle 2 pi f = q pi/2 + theta, q = round(4 f), |theta| <= pi/4: Taylor to theta^9 and theta^10.
      const float four_f = 4.0F * f;
      const auto q = static_cast<std::int32_t>(four_f + 0.5F);
      const float theta = (four_f - static_cast<float>(q)) * kHalfPi;
      const float t2 = theta * theta;
      const float sin_t =
          theta * (1.0F + t2 * (-1.0F / 6 + t2 * (1.0F / 120 + t2 * (-1.0F / 5040 + t2 * (1.0F / 362880)))));
      const float cos_t =
          1.0F + t2 * (-0.5F + t2 * (1.0F / 24 + t2 * (-1.0F / 720 + t2 * (1.0F / 40320 + t2 * (-1.0F / 3628800)))));
      // Quadrant q: odd ones swap sin and cos; sin < 0 in 2, 3 and cos < 0 in 1, 2. As bit operations.
      const std::int32_t swap = -(q & 1);  // all ones or zero
      const std::int32_t sin_bits = std::bit_cast<std::int32_t>(sin_t), cos_bits = std::bit_cast<std::int32_t>(cos_t);
      const float sin_a = std::bit_cast<float>(((sin_bits & ~swap) | (cos_bits & swap)) ^ ((q & 2) << 30));
      const float cos_a = std::bit_cast<float>(((cos_bits & ~swap) | (sin_bits & swap)) ^ (((q + 1) & 2) << 30));
      out[at + l] = radius * cos_a;
      out[at + L + l] = radius * sin_a;
    }
  }
  for (std::size_t l = 0; l < L; ++l) {
    state[l] = s0[l];
    state[L + l] = s1[l];
    state[2 * L + l] = s2[l];
    state[3 * L + l] = s3[l];
  }
}

}  // namespace

GaussianBatch::GaussianBatch(std::uint64_t seed) noexcept {
  std::uint64_t x = seed ^ 0x6761'7573'7369'616EULL;  // a stream apart from the generator's other draws
  for (std::uint64_t& word : state_) word = splitmix64(x);
}

void GaussianBatch::refill() noexcept {
  refill_lanes(state_.data(), batch_.data());
  at_ = 0;
}

}  // namespace weir::acq::detail

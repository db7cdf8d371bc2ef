#pragma once
// Clustered vectors like real embeddings, for the ann tests and benchmark: `classes` unit class
// centres, each vector its class's centre plus a class-specific low-rank variation (`rank`
// directions of its own, amplitude `spread`) plus isotropic Gaussian noise (amplitude `noise`),
// normalised. Deterministic for a seed (std::mt19937_64, libstdc++'s normal distribution).
#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace weir::ann {

struct ClusterShape {
  std::uint32_t classes = 64;  // class centres
  std::uint32_t rank = 16;     // directions of variation within a class
  float spread = 0.5F;         // amplitude of the within-class variation (centres have norm 1)
  float noise = 0.15F;         // amplitude of the isotropic noise
};

class ClusteredData {
 public:
  ClusteredData(std::uint32_t dim, const ClusterShape& shape, std::uint64_t seed)
      : dim_(dim), shape_(shape), random_(seed), centres_(std::size_t{shape.classes} * dim),
        basis_(std::size_t{shape.classes} * shape.rank * dim) {
    for (float& x : centres_) x = gauss();
    for (std::uint32_t c = 0; c < shape.classes; ++c) normalise(std::span<float>(centres_.data() + std::size_t{c} * dim, dim));
    const float scale = 1.0F / std::sqrt(static_cast<float>(dim) * static_cast<float>(shape.rank));
    for (float& x : basis_) x = gauss() * scale;
  }

  /// The next vector (of class `cls`, or a random class when cls >= classes) into out (dim floats).
  /// Returns its class.
  std::uint32_t next(std::span<float> out, std::uint32_t cls = ~0U) {
    if (cls >= shape_.classes) cls = static_cast<std::uint32_t>(random_() % shape_.classes);
    const float* centre = centres_.data() + std::size_t{cls} * dim_;
    for (std::uint32_t i = 0; i < dim_; ++i) out[i] = centre[i] + shape_.noise * gauss() / std::sqrt(static_cast<float>(dim_));
    for (std::uint32_t r = 0; r < shape_.rank; ++r) {
      const float z = shape_.spread * gauss();  // the rank directions together: norm ~ spread
      const float* b = basis_.data() + (std::size_t{cls} * shape_.rank + r) * dim_;
      for (std::uint32_t i = 0; i < dim_; ++i) out[i] += z * b[i];
    }
    normalise(out);
    return cls;
  }

  [[nodiscard]] std::uint32_t dim() const noexcept { return dim_; }

 private:
  float gauss() { return normal_(random_); }
  static void normalise(std::span<float> v) {
    double sum = 0;
    for (const float x : v) sum += static_cast<double>(x) * x;
    const auto scale = static_cast<float>(sum > 0 ? 1.0 / std::sqrt(sum) : 0.0);
    for (float& x : v) x *= scale;
  }

  std::uint32_t dim_;
  ClusterShape shape_;
  std::mt19937_64 random_;
  std::normal_distribution<float> normal_{0.0F, 1.0F};
  std::vector<float> centres_;
  std::vector<float> basis_;  // classes x rank x dim
};

}  // namespace weir::ann

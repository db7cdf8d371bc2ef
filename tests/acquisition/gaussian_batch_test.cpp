#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "weir/acq/detail/gaussian_batch.hpp"
#include "weir/acq/signal_generator.hpp"

using weir::acq::detail::GaussianBatch;

namespace {

constexpr std::size_t kSamples = 1'000'000;

std::vector<double> draw(std::uint64_t seed, std::size_t n) {
  GaussianBatch g(seed);
  std::vector<double> x(n);
  for (double& v : x) v = g.next();
  return x;
}

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

}  // namespace

TEST_SUITE("acquisition.gaussian") {

TEST_CASE("a million normals have mean 0, variance 1, skewness 0 and kurtosis 3") {
  const std::vector<double> x = draw(2024, kSamples);
  long double s1 = 0, s2 = 0, s3 = 0, s4 = 0;
  for (const double v : x) {
    s1 += v;
    s2 += static_cast<long double>(v) * v;
    s3 += static_cast<long double>(v) * v * v;
    s4 += static_cast<long double>(v) * v * v * v;
  }
  const auto n = static_cast<long double>(x.size());
  const double mean = static_cast<double>(s1 / n);
  const double var = static_cast<double>(s2 / n) - mean * mean;
  const double skew = static_cast<double>(s3 / n) / std::pow(var, 1.5);
  const double kurt = static_cast<double>(s4 / n) / (var * var);
  // Five standard errors of each estimator for n = 1e6 normal samples.
  const double root_n = std::sqrt(static_cast<double>(kSamples));
  CHECK(std::fabs(mean) < 5 / root_n);
  CHECK(std::fabs(var - 1) < 5 * std::sqrt(2.0) / root_n);
  CHECK(std::fabs(skew) < 5 * std::sqrt(6.0) / root_n);
  CHECK(std::fabs(kurt - 3) < 5 * std::sqrt(24.0) / root_n);
}

TEST_CASE("the empirical CDF of a million normals passes Kolmogorov-Smirnov against the normal CDF") {
  std::vector<double> x = draw(7, kSamples);
  std::sort(x.begin(), x.end());
  const auto n = static_cast<double>(x.size());
  double d = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double f = normal_cdf(x[i]);
    d = std::max({d, f - static_cast<double>(i) / n, static_cast<double>(i + 1) / n - f});
  }
  CAPTURE(d);
  CHECK(d < 1.95 / std::sqrt(n));  // the 0.1 % critical value
}

TEST_CASE("a chi-square over 40 equiprobable bins and the tails beyond 3 and 4 sigma match the normal") {
  const std::vector<double> x = draw(99, kSamples);
  constexpr int kBins = 40;
  std::vector<double> count(kBins, 0.0);
  double beyond3 = 0, beyond4 = 0;
  for (const double v : x) {
    const int bin = std::min(kBins - 1, static_cast<int>(normal_cdf(v) * kBins));
    count[static_cast<std::size_t>(bin)] += 1;
    beyond3 += std::fabs(v) > 3 ? 1 : 0;
    beyond4 += std::fabs(v) > 4 ? 1 : 0;
  }
  const double expected = static_cast<double>(kSamples) / kBins;
  double chi2 = 0;
  for (const double c : count) chi2 += (c - expected) * (c - expected) / expected;
  CAPTURE(chi2);
  CHECK(chi2 < 77.0);  // 39 degrees of freedom: P(chi2 > 77) < 0.0005
  const double p3 = std::erfc(3 / std::sqrt(2.0)) * kSamples, p4 = std::erfc(4 / std::sqrt(2.0)) * kSamples;
  CHECK(std::fabs(beyond3 - p3) < 5 * std::sqrt(p3));
  CHECK(std::fabs(beyond4 - p4) < 5 * std::sqrt(p4));
}

TEST_CASE("the same seed gives the same normals however they are taken, another seed others") {
  const std::vector<double> a = draw(5, 5000);
  GaussianBatch g(5);
  std::vector<double> b;
  while (b.size() < a.size()) {
    const float* z = nullptr;
    const std::size_t n = g.take(std::min<std::size_t>(333, a.size() - b.size()), &z);
    REQUIRE(n > 0);
    b.insert(b.end(), z, z + n);
  }
  CHECK(a == b);
  CHECK(draw(6, 5000) != a);
}

TEST_CASE("the noise signal is the seed's normal stream, scaled and offset, in any block size") {
  weir::acq::SignalConfig c;
  c.kind = weir::acq::SignalKind::noise;
  c.sample_rate_hz = 1e6;
  c.amplitude = 0.5;
  c.offset = -1.0;
  c.seed = 31;
  auto whole = weir::acq::SignalGenerator::create(c, 4096);
  auto pieces = weir::acq::SignalGenerator::create(c, 100);
  REQUIRE(whole);
  REQUIRE(pieces);
  std::vector<float> x(10'000), y(10'000);
  whole->fill(std::span<float>(x));
  for (std::size_t at = 0; at < y.size(); at += 77)
    pieces->fill(std::span<float>(y.data() + at, std::min<std::size_t>(77, y.size() - at)));
  CHECK(std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0);
  const std::vector<double> z = draw(31, 10'000);
  for (std::size_t i = 0; i < x.size(); ++i) REQUIRE(x[i] == static_cast<float>(-1.0 + 0.5 * z[i]));
}

}  // TEST_SUITE

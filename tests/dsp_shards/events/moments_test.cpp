#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <vector>

#include "weir/acq/signal_generator.hpp"
#include "weir/dsp/moments.hpp"
#include "weir/dsp/sliding_moments.hpp"

using namespace weir::dsp;

namespace {

// The reference: a plain two-pass in long double over the same samples.
struct Reference {
  long double mean = 0, stddev = 0, rms = 0, min = 0, max = 0;
};

Reference reference(std::span<const double> x) {
  Reference r;
  long double sum = 0;
  r.min = r.max = x[0];
  for (const double v : x) {
    sum += v;
    r.min = std::min<long double>(r.min, v);
    r.max = std::max<long double>(r.max, v);
  }
  const auto n = static_cast<long double>(x.size());
  r.mean = sum / n;
  long double sq = 0, sq_raw = 0;
  for (const double v : x) {
    sq += (v - r.mean) * (v - r.mean);
    sq_raw += static_cast<long double>(v) * v;
  }
  r.stddev = std::sqrt(sq / n);
  r.rms = std::sqrt(sq_raw / n);
  return r;
}

// Relative agreement, with `floor` as the scale below which differences are absolute.
void check_close(double got, long double want, double rel, double floor = 1e-300) {
  const double scale = std::max(std::fabs(static_cast<double>(want)), floor);
  CHECK_MESSAGE(std::fabs(got - static_cast<double>(want)) <= rel * scale, "got " << got << " want " << static_cast<double>(want));
}

void check_against(const Moments& m, std::span<const double> x, double rel) {
  const Reference r = reference(x);
  CHECK(m.count == x.size());
  check_close(m.mean, r.mean, rel, static_cast<double>(r.stddev));
  check_close(m.stddev(), r.stddev, rel);
  check_close(m.rms(), r.rms, rel);
  CHECK(m.min == static_cast<double>(r.min));
  CHECK(m.max == static_cast<double>(r.max));
  CHECK(m.peak_to_peak() == static_cast<double>(r.max - r.min));
}

std::vector<double> noise(std::size_t n, double offset, double sigma, std::uint64_t seed) {
  weir::acq::SignalConfig c;
  c.kind = weir::acq::SignalKind::noise;
  c.sample_rate_hz = 1e6;
  c.amplitude = sigma;
  c.offset = offset;
  c.seed = seed;
  auto generator = weir::acq::SignalGenerator::create(c, 1024);
  REQUIRE(generator);
  std::vector<double> x(n);
  generator->fill(std::span<double>(x));
  return x;
}

}  // namespace

TEST_SUITE("dsp.events.moments") {

TEST_CASE("block moments match a long double two-pass for blocks of many sizes") {
  const std::vector<double> x = noise(20000, 0.25, 1.5, 11);
  for (const std::size_t block : {1U, 2U, 7U, 64U, 1000U, 4096U}) {
    CAPTURE(block);
    for (std::size_t at = 0; at + block <= x.size(); at += block * 3) {
      const std::span<const double> b(x.data() + at, block);
      check_against(moments_of(b), b, 1e-12);
    }
  }
}

TEST_CASE("merged block aggregates equal the aggregate of the whole run") {
  const std::vector<double> x = noise(10007, -3, 0.01, 12);
  Moments total;
  for (std::size_t at = 0; at < x.size(); at += 333)
    total = merge(total, moments_of(std::span<const double>(x.data() + at, std::min<std::size_t>(333, x.size() - at))));
  check_against(total, x, 1e-12);
  CHECK(merge(Moments{}, total).mean == total.mean);  // the empty run is the identity
  CHECK(merge(total, Moments{}).m2 == total.m2);
}

TEST_CASE("the sliding window matches the reference over the last N blocks at every block") {
  for (const std::size_t block : {7U, 64U, 1000U}) {
    for (const std::uint32_t window : {1U, 3U, 8U}) {
      CAPTURE(block);
      CAPTURE(window);
      const std::vector<double> x = noise(block * 40, 2.0, 0.5, block + window);
      auto sliding = SlidingMoments::create(window);
      REQUIRE(sliding);
      for (std::size_t b = 0; b < 40; ++b) {
        sliding->push(moments_of(std::span<const double>(x.data() + b * block, block)));
        const std::size_t in_window = std::min<std::size_t>(b + 1, window);
        CHECK(sliding->blocks() == in_window);
        const std::span<const double> covered(x.data() + (b + 1 - in_window) * block, in_window * block);
        check_against(sliding->value(), covered, 1e-11);
      }
    }
  }
}

TEST_CASE("a constant signal has a standard deviation of exactly 0, per block and over the window") {
  const std::vector<double> x(5000, 3.25);
  auto sliding = SlidingMoments::create(4);
  REQUIRE(sliding);
  for (std::size_t at = 0; at < x.size(); at += 250) {
    const Moments m = moments_of(std::span<const double>(x.data() + at, 250));
    CHECK(m.stddev() == 0.0);
    CHECK(m.mean == 3.25);
    CHECK(m.rms() == 3.25);
    CHECK(m.peak_to_peak() == 0.0);
    sliding->push(m);
    CHECK(sliding->value().stddev() == 0.0);
    CHECK(sliding->value().mean == 3.25);
  }
}

TEST_CASE("a large offset costs no precision in the standard deviation") {
  // Sum-of-squares formulas lose every digit here: x^2 ~ 1e18 while the variance is 1.
  const std::vector<double> x = noise(64 * 100, 1e9, 1.0, 13);
  auto sliding = SlidingMoments::create(10);
  REQUIRE(sliding);
  for (std::size_t b = 0; b < 100; ++b) {
    const std::span<const double> block(x.data() + b * 64, 64);
    const Moments m = moments_of(block);
    const Reference r = reference(block);
    check_close(m.stddev(), r.stddev, 1e-9);
    check_close(m.mean, r.mean, 1e-15);
    sliding->push(m);
  }
  const std::span<const double> last(x.data() + 90 * 64, 10 * 64);
  const Reference r = reference(last);
  check_close(sliding->value().stddev(), r.stddev, 1e-6);
  check_close(sliding->value().mean, r.mean, 1e-15);
  check_close(sliding->value().rms(), r.rms, 1e-15);
}

TEST_CASE("f32 block moments match a long double two-pass on random data, block sizes around the lanes") {
  std::mt19937_64 rng(21);
  std::normal_distribution<float> gauss(0.0F, 1.0F);
  for (const float offset : {0.0F, 3.5F, -1200.0F, 4.0e6F}) {
    for (const std::size_t block : {1U, 2U, 15U, 16U, 17U, 31U, 33U, 255U, 4096U, 4099U}) {
      CAPTURE(offset);
      CAPTURE(block);
      std::vector<float> x(block);
      for (float& v : x) v = offset + 0.75F * gauss(rng);
      const std::vector<double> wide(x.begin(), x.end());
      const Moments m = moments_of(std::span<const float>(x));
      check_against(m, wide, 1e-12);
      // The f32 kernel reads the same values the f64 kernel would after a conversion.
      const Moments d = moments_of(std::span<const double>(wide));
      CHECK(m.min == d.min);
      CHECK(m.max == d.max);
      check_close(m.mean, d.mean, 1e-14, d.stddev());
      check_close(m.m2, d.m2, 1e-12);
    }
  }
}

TEST_CASE("NaN samples: min and max skip them after the first sample, the mean turns NaN") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const std::size_t at : {1U, 5U, 16U, 40U, 99U}) {
    CAPTURE(at);
    std::vector<double> x(100);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i % 37) - 10.0;
    x[at] = nan;
    const std::vector<float> narrow(x.begin(), x.end());
    for (const Moments& m : {moments_of(std::span<const double>(x)), moments_of(std::span<const float>(narrow))}) {
      CHECK(m.count == 100);
      CHECK(m.min == -10.0);
      CHECK(m.max == 26.0);
      CHECK(std::isnan(m.mean));
    }
  }
  std::vector<double> first(50, 1.0);
  first[0] = nan;
  const std::vector<float> narrow(first.begin(), first.end());
  for (const Moments& m : {moments_of(std::span<const double>(first)), moments_of(std::span<const float>(narrow))}) {
    CHECK(std::isnan(m.min));
    CHECK(std::isnan(m.max));
    CHECK(std::isnan(m.mean));
  }
}

TEST_CASE("f32 block aggregates merged across blocks equal the aggregate of the whole run") {
  std::mt19937_64 rng(22);
  std::uniform_real_distribution<float> uniform(-2.0F, 5.0F);
  std::vector<float> x(100'003);
  for (float& v : x) v = uniform(rng);
  Moments total;
  for (std::size_t at = 0; at < x.size(); at += 4096)
    total = merge(total, moments_of(std::span<const float>(x.data() + at, std::min<std::size_t>(4096, x.size() - at))));
  check_against(total, std::vector<double>(x.begin(), x.end()), 1e-12);
}

TEST_CASE("a window of 0 blocks is refused") {
  auto sliding = SlidingMoments::create(0);
  REQUIRE_FALSE(sliding);
  CHECK(sliding.error().what.find("0 blocks") != std::string::npos);
}

}  // TEST_SUITE

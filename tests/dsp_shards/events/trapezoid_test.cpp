#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "weir/dsp/trapezoid.hpp"

using namespace weir::dsp;

namespace {

Trapezoid make(std::uint32_t k, std::uint32_t m, double tau) {
  auto t = Trapezoid::create(k, m, tau);
  REQUIRE_MESSAGE(t, (t ? "" : t.error().what));
  return std::move(*t);
}

// Jordanov & Knoll's definition, evaluated directly in long double:
// d[n] = v[n] - v[n-k] - v[n-l] + v[n-k-l];  p = cumulative d;  s = cumulative (p + M d).
std::vector<long double> direct(const std::vector<double>& v, std::uint32_t k, std::uint32_t m, double tau) {
  const std::size_t l = std::size_t{k} + m;
  const auto at = [&](std::size_t n, std::size_t back) -> long double { return n >= back ? v[n - back] : 0.0L; };
  const long double big_m = 1.0L / std::expm1(1.0L / static_cast<long double>(tau));
  std::vector<long double> out(v.size());
  long double p = 0, s = 0;
  for (std::size_t n = 0; n < v.size(); ++n) {
    const long double d = at(n, 0) - at(n, k) - at(n, l) + at(n, k + l);
    p += d;
    s += p + big_m * d;
    out[n] = s / (static_cast<long double>(k) * (big_m + 1));
  }
  return out;
}

}  // namespace

TEST_SUITE("dsp.events.trapezoid") {

TEST_CASE("the recursive shaper equals Jordanov and Knoll's direct definition") {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(0.0, 0.01);
  std::vector<double> v(20000);
  const double tau = 23.7;
  for (std::size_t n = 0; n < v.size(); ++n) {
    v[n] = noise(rng);
    if (n % 1500 >= 300) v[n] += 0.8 * std::exp(-static_cast<double>(n % 1500 - 300) / tau);
  }
  for (const auto& [k, m] : {std::pair{1U, 0U}, std::pair{5U, 3U}, std::pair{16U, 0U}, std::pair{40U, 11U}}) {
    CAPTURE(k);
    CAPTURE(m);
    Trapezoid t = make(k, m, tau);
    CHECK(t.length() == 2 * k + m);
    const std::vector<long double> want = direct(v, k, m, tau);
    double worst = 0;
    for (std::size_t n = 0; n < v.size(); ++n)
      worst = std::max(worst, std::fabs(t.step(v[n]) - static_cast<double>(want[n])));
    CHECK(worst < 1e-12);
  }
}

TEST_CASE("an exponential pulse becomes a trapezoid whose flat top is exactly its amplitude") {
  const std::uint32_t k = 12, m = 5;
  const double tau = 50, amplitude = 0.73;
  const std::size_t a = 100;  // the pulse's first sample
  Trapezoid t = make(k, m, tau);
  for (std::size_t n = 0; n < 400; ++n) {
    const double v = n >= a ? amplitude * std::exp(-static_cast<double>(n - a) / tau) : 0.0;
    const double out = t.step(v);
    if (n < a || n >= a + 2 * k + m - 1) {
      CHECK(std::fabs(out) < 1e-12);
    } else if (n >= a + k - 1 && n <= a + k + m - 1) {
      CHECK(out == doctest::Approx(amplitude).epsilon(1e-12));  // the flat top: m + 1 samples
    } else if (n < a + k - 1) {
      CHECK(out == doctest::Approx(amplitude * static_cast<double>(n - a + 1) / k).epsilon(1e-12));  // rising
    } else {
      CHECK(out == doctest::Approx(amplitude * static_cast<double>(a + 2 * k + m - 1 - n) / k).epsilon(1e-12));
    }
  }
}

TEST_CASE("with tau 0 a step becomes the same trapezoid") {
  const std::uint32_t k = 6, m = 2;
  Trapezoid t = make(k, m, 0);
  std::vector<double> out;
  for (std::size_t n = 0; n < 40; ++n) out.push_back(t.step(n >= 10 ? 2.5 : 0.0));
  CHECK(out[9] == 0.0);
  CHECK(out[10] == doctest::Approx(2.5 / k));
  for (std::size_t n = 10 + k - 1; n <= 10 + k + m - 1; ++n) CHECK(out[n] == doctest::Approx(2.5));
  CHECK(std::fabs(out[10 + 2 * k + m - 1]) < 1e-12);
  CHECK(std::fabs(out[39]) < 1e-12);
}

TEST_CASE("the output error stays bounded over a long stream with a large offset") {
  // The shaper is an FIR of length k + l; the last output is recomputed directly from the last
  // inputs. A direct recursion would have integrated ~4 million rounding errors twice by now.
  const std::uint32_t k = 20, m = 4;
  const double tau = 40;
  const std::size_t l = k + m;
  Trapezoid t = make(k, m, tau);
  std::mt19937_64 rng(8);
  std::normal_distribution<double> noise(1000.0, 1.0);
  std::vector<double> tail(k + l);
  double last = 0;
  const std::size_t n_total = 4'000'000;
  for (std::size_t n = 0; n < n_total; ++n) {
    const double v = noise(rng);
    tail[n % tail.size()] = v;
    last = t.step(v);
  }
  std::vector<double> recent(tail.size());  // oldest first
  for (std::size_t i = 0; i < tail.size(); ++i) recent[i] = tail[(n_total + i) % tail.size()];
  const std::vector<long double> want = direct(recent, k, m, tau);  // the FIR is full at the last sample
  CHECK(std::fabs(last - static_cast<double>(want.back())) < 1e-9);
}

TEST_CASE("shaper settings out of range are refused") {
  CHECK_FALSE(Trapezoid::create(0, 0, 10));
  CHECK_FALSE(Trapezoid::create(4, Trapezoid::kMaxShapingSamples + 1, 10));
  auto bad_tau = Trapezoid::create(4, 1, -1);
  REQUIRE_FALSE(bad_tau);
  CHECK(bad_tau.error().what.find("tau = -1") != std::string::npos);
}

}  // TEST_SUITE

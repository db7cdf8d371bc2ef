#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "dsp_test_support.hpp"
#include "weir/dsp/decimator.hpp"
#include "weir/dsp/fir_filter.hpp"

using weir::dsp::Decimator;

namespace {

constexpr double kRate = 48000;
constexpr std::uint32_t kFactor = 4;
constexpr double kOutRate = kRate / kFactor;  // 12 kHz; new Nyquist 6 kHz

std::vector<float> decimate(Decimator& d, std::span<const float> x, std::size_t block) {
  std::vector<float> y(d.outputs_for(x.size()));
  std::size_t written = 0;
  for (std::size_t at = 0; at < x.size(); at += block) {
    const auto chunk = x.subspan(at, std::min(block, x.size() - at));
    const std::size_t expected = d.outputs_for(chunk.size());
    const std::size_t made = d.process(chunk, std::span<float>(y).subspan(written));
    CHECK(made == expected);
    written += made;
  }
  CHECK(written == y.size());
  return y;
}

// Amplitude of the output component at f_out, from a unit input tone at f_in, after settling.
double response(double f_in, double f_out) {
  auto d = Decimator::create_antialias(kFactor, kRate);
  REQUIRE(d);
  const std::size_t settle = d->taps().size();
  const auto x = weir::test::sine(kRate, f_in, 1.0, settle + kFactor * static_cast<std::size_t>(kOutRate));
  const auto y = decimate(*d, x, 1000);
  const std::size_t skip = settle / kFactor;
  return weir::test::tone_amplitude(std::span<const float>(y).subspan(skip, static_cast<std::size_t>(kOutRate)), f_out,
                                    kOutRate);
}

// The direct form, in double: output j is sum_i h[i] x[n_j - i] at n_j = j * factor, zeros before
// the first sample. What the filter computed one sample at a time before it was vectorised.
std::vector<double> direct_form(const std::vector<float>& h, const std::vector<float>& x, std::size_t factor) {
  std::vector<double> y;
  for (std::size_t n = 0; n < x.size(); n += factor) {
    double acc = 0;
    for (std::size_t i = 0; i < h.size() && i <= n; ++i) acc += static_cast<double>(h[i]) * x[n - i];
    y.push_back(acc);
  }
  return y;
}

}  // namespace

TEST_SUITE("dsp.decimator") {

TEST_CASE("the polyphase filter matches the direct form for every tap count, factor and block size") {
  std::mt19937_64 rng(5);
  std::normal_distribution<float> gauss(0.0F, 1.0F);
  std::vector<float> x(9001);
  for (float& v : x) v = gauss(rng);
  for (const std::size_t taps : {1U, 2U, 3U, 7U, 64U, 101U, 1001U}) {
    std::vector<float> h(taps);
    for (float& v : h) v = gauss(rng) / static_cast<float>(taps);
    for (const std::uint32_t factor : {1U, 2U, 3U, 4U, 7U, 1024U}) {
      CAPTURE(taps);
      CAPTURE(factor);
      const std::vector<double> want = direct_form(h, x, factor);
      double scale = 0;
      for (const float v : h) scale += std::fabs(v);
      std::vector<float> first;
      for (const std::size_t block : {std::size_t{1}, std::size_t{13}, std::size_t{4096}, std::size_t{5000}, x.size()}) {
        CAPTURE(block);
        auto d = Decimator::create(factor, h, 1e6);
        REQUIRE(d);
        const std::vector<float> y = decimate(*d, x, block);
        REQUIRE(y.size() == want.size());
        std::size_t off = 0;
        for (std::size_t j = 0; j < y.size(); ++j)
          if (std::fabs(y[j] - want[j]) > 1e-5 * scale * 4) ++off;  // |x| < 4 sigma; float rounding of ~taps adds
        CHECK(off == 0);
        if (first.empty()) first = y;
        CHECK(y == first);  // bit-identical whatever the block size
        if (factor == 1) {  // the plain FIR is the same kernel
          auto f = weir::dsp::FirFilter::create(h);
          REQUIRE(f);
          std::vector<float> z(x);
          for (std::size_t at = 0; at < z.size(); at += block) {
            const std::span<float> chunk(z.data() + at, std::min(block, z.size() - at));
            f->process(chunk, chunk);  // in place
          }
          CHECK(z == first);
          auto g = weir::dsp::FirFilter::create(h);
          REQUIRE(g);
          CHECK(g->step(x[0]) == first[0]);
          CHECK(g->step(x[1]) == first[1]);
        }
      }
    }
  }
}

TEST_CASE("decimation by M makes one output per M inputs at fs / M") {
  auto d = Decimator::create_antialias(kFactor, kRate);
  REQUIRE(d);
  CHECK(d->output_rate_hz() == kOutRate);
  CHECK(d->factor() == kFactor);
  const auto x = weir::test::noise(kRate, 1.0, 4800, 19);
  CHECK(decimate(*d, x, 480).size() == 1200);
  CHECK(d->inputs_until_output() == 1);  // a whole number of M consumed: the next input makes an output
}

TEST_CASE("the output does not depend on block sizes, including ones that do not divide M") {
  const auto x = weir::test::noise(kRate, 1.0, 4801, 23);
  std::vector<float> reference;
  for (const std::size_t block : {std::size_t{1}, std::size_t{3}, std::size_t{4}, std::size_t{333}, x.size()}) {
    CAPTURE(block);
    auto d = Decimator::create_antialias(kFactor, kRate);
    REQUIRE(d);
    const auto y = decimate(*d, x, block);
    CHECK(y.size() == 1201);  // ceil(4801 / 4): output m is the filtered input m * M
    if (reference.empty()) reference = y;
    CHECK(y == reference);
  }
}

TEST_CASE("a tone in the new band passes and a tone that would alias is attenuated") {
  CHECK(std::abs(weir::test::to_db(response(1000, 1000))) < 0.1);
  CHECK(std::abs(weir::test::to_db(response(3000, 3000))) < 0.1);
  CHECK(weir::test::to_db(response(7000, kOutRate - 7000)) < -50);   // would fold to 5 kHz
  CHECK(weir::test::to_db(response(9000, kOutRate - 9000)) < -50);   // would fold to 3 kHz
  CHECK(weir::test::to_db(response(20000, 4000)) < -50);              // would fold to 4 kHz
}

TEST_CASE("decimation keeps every M-th sample of the filtered input") {
  // With a one-tap identity filter, decimation is plain sample picking: outputs are x[0], x[M], ...
  auto d = Decimator::create(3, {1.0F}, 300);
  REQUIRE(d);
  CHECK(d->output_rate_hz() == 100);
  const std::vector<float> x = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<float> y(4);
  CHECK(d->process(x, y) == 4);
  CHECK(y == std::vector<float>{0, 3, 6, 9});
}

TEST_CASE("a bad factor is refused naming it and the range") {
  auto zero = Decimator::create_antialias(0, kRate);
  REQUIRE_FALSE(zero);
  CHECK(zero.error().what.find("factor 0") != std::string::npos);
  CHECK(zero.error().what.find("1024") != std::string::npos);
  CHECK_FALSE(Decimator::create(2, {}, kRate));
}

}  // TEST_SUITE

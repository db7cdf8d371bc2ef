#include <doctest/doctest.h>

#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "dsp_test_support.hpp"
#include "weir/dsp/biquad.hpp"
#include "weir/dsp/dc_blocker.hpp"

using weir::dsp::BiquadCascade;
using weir::dsp::BiquadType;
using weir::dsp::DcBlocker;

namespace {

constexpr double kRate = 10000;
constexpr std::size_t kSettle = 4000;
constexpr std::size_t kMeasure = 10000;  // one second: whole cycles of every whole-Hz tone

template <class Filter>
std::vector<float> run_blocks(Filter& filter, std::vector<float> x, std::size_t block) {
  for (std::size_t at = 0; at < x.size(); at += block) {
    const std::span<float> chunk(x.data() + at, std::min(block, x.size() - at));
    filter.process(chunk, chunk);
  }
  return x;
}

double biquad_gain(BiquadType type, double f0, double q, double f, std::size_t sections = 1) {
  auto c = weir::dsp::design_biquad(type, f0, q, kRate);
  REQUIRE(c);
  auto cascade = BiquadCascade::create(std::vector<weir::dsp::BiquadCoeffs>(sections, *c));
  REQUIRE(cascade);
  const auto y = run_blocks(*cascade, weir::test::sine(kRate, f, 1.0, kSettle + kMeasure), 256);
  return weir::test::tone_amplitude(std::span<const float>(y).subspan(kSettle), f, kRate);
}

}  // namespace

TEST_SUITE("dsp.iir") {

TEST_CASE("cookbook biquads have their designed gain at f0 and far from it") {
  const double f0 = 1000;
  SUBCASE("low-pass: Q at f0, 1 far below, falling 12 dB per octave far above") {
    CHECK(biquad_gain(BiquadType::lowpass, f0, std::sqrt(0.5), f0) == doctest::Approx(std::sqrt(0.5)).epsilon(1e-3));
    CHECK(biquad_gain(BiquadType::lowpass, f0, 2.0, f0) == doctest::Approx(2.0).epsilon(1e-3));
    CHECK(biquad_gain(BiquadType::lowpass, f0, 2.0, 20) == doctest::Approx(1.0).epsilon(1e-3));
  }
  SUBCASE("high-pass: Q at f0, 1 far above") {
    CHECK(biquad_gain(BiquadType::highpass, f0, std::sqrt(0.5), f0) == doctest::Approx(std::sqrt(0.5)).epsilon(1e-3));
    CHECK(biquad_gain(BiquadType::highpass, f0, std::sqrt(0.5), 4900) == doctest::Approx(1.0).epsilon(1e-2));
  }
  SUBCASE("band-pass: 0 dB at f0") {
    CHECK(biquad_gain(BiquadType::bandpass, f0, 5.0, f0) == doctest::Approx(1.0).epsilon(1e-3));
    CHECK(weir::test::to_db(biquad_gain(BiquadType::bandpass, f0, 5.0, 100)) < -30);
  }
  SUBCASE("notch: nothing at f0, everything far away") {
    CHECK(weir::test::to_db(biquad_gain(BiquadType::notch, f0, 2.0, f0)) < -60);
    CHECK(biquad_gain(BiquadType::notch, f0, 2.0, 100) == doctest::Approx(1.0).epsilon(1e-2));
  }
  SUBCASE("every measured gain matches the design's transfer function") {
    for (const BiquadType type : {BiquadType::lowpass, BiquadType::highpass, BiquadType::bandpass, BiquadType::notch})
      for (const double f : {50.0, 300.0, 1000.0, 2500.0, 4500.0}) {
        CAPTURE(f);
        const auto c = weir::dsp::design_biquad(type, f0, 1.3, kRate);
        REQUIRE(c);
        const double expected = std::abs(weir::dsp::biquad_response(*c, f, kRate));
        CHECK(biquad_gain(type, f0, 1.3, f) == doctest::Approx(expected).epsilon(2e-3).scale(1e-4));
      }
  }
}

TEST_CASE("a cascade multiplies its sections' gains") {
  CHECK(biquad_gain(BiquadType::lowpass, 1000, 2.0, 1000, 2) == doctest::Approx(4.0).epsilon(2e-3));
}

TEST_CASE("biquad state carries across blocks") {
  auto c = weir::dsp::design_biquad(BiquadType::lowpass, 700, 3.0, kRate);
  REQUIRE(c);
  const auto x = weir::test::noise(kRate, 1.0, 3000, 17);
  std::vector<float> reference;
  for (const std::size_t block : {std::size_t{1}, std::size_t{5}, std::size_t{512}, x.size()}) {
    auto cascade = BiquadCascade::create({*c, *c});
    REQUIRE(cascade);
    const auto y = run_blocks(*cascade, x, block);
    if (reference.empty()) reference = y;
    CHECK(y == reference);
  }
}

TEST_CASE("a biquad design refuses f0 at Nyquist and Q that is not positive") {
  auto at_nyquist = weir::dsp::design_biquad(BiquadType::lowpass, 5000, 1, kRate);
  REQUIRE_FALSE(at_nyquist);
  CHECK(at_nyquist.error().what.find("f0 5000 Hz") != std::string::npos);
  CHECK_FALSE(weir::dsp::design_biquad(BiquadType::notch, 100, 0, kRate));
  CHECK_FALSE(BiquadCascade::create({}));
}

TEST_CASE("DC removal kills an offset and passes the signal") {
  weir::acq::SignalConfig config;
  config.kind = weir::acq::SignalKind::sine;
  config.sample_rate_hz = kRate;
  config.frequency_hz = 1000;
  config.amplitude = 1.0;
  config.offset = 2.0;
  auto blocker = DcBlocker::create(10, kRate);
  REQUIRE(blocker);
  const auto y = run_blocks(*blocker, weir::test::generate(config, kSettle + kMeasure), 100);
  const std::span<const float> steady = std::span<const float>(y).subspan(kSettle);
  const double mean = std::accumulate(steady.begin(), steady.end(), 0.0) / static_cast<double>(steady.size());
  CHECK(std::abs(mean) < 1e-3);
  CHECK(std::abs(weir::test::to_db(weir::test::tone_amplitude(steady, 1000, kRate))) < 0.01);
}

TEST_CASE("the DC blocker is 3 dB down at its corner") {
  auto blocker = DcBlocker::create(10, kRate);
  REQUIRE(blocker);
  const auto y = run_blocks(*blocker, weir::test::sine(kRate, 10, 1.0, kSettle + kMeasure), 1000);
  const double gain = weir::test::tone_amplitude(std::span<const float>(y).subspan(kSettle), 10, kRate);
  CHECK(weir::test::to_db(gain) == doctest::Approx(-3.01).epsilon(0.03));
  CHECK_FALSE(DcBlocker::create(0, kRate));
  CHECK_FALSE(DcBlocker::create(6000, kRate));
}

}  // TEST_SUITE

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "dsp_test_support.hpp"
#include "weir/dsp/fir_design.hpp"
#include "weir/dsp/fir_filter.hpp"

using weir::dsp::FirBand;
using weir::dsp::FirFilter;
using weir::dsp::FirSpec;
using weir::dsp::WindowKind;

namespace {

constexpr double kRate = 10000;
constexpr std::size_t kMeasure = 10000;  // one second: every whole-Hz tone fits a whole number of cycles

FirSpec spec(FirBand band, double cutoff, double cutoff_high = 0, WindowKind window = WindowKind::hamming) {
  FirSpec s;
  s.band = band;
  s.sample_rate_hz = kRate;
  s.cutoff_hz = cutoff;
  s.cutoff_high_hz = cutoff_high;
  s.taps = 101;
  s.window.kind = window;
  return s;
}

// Gain in dB at f, measured by streaming a unit sine through the filter in blocks of 333 samples.
double measured_gain_db(const FirSpec& s, double f) {
  auto taps = weir::dsp::design_fir(s);
  REQUIRE(taps);
  auto filter = FirFilter::create(*taps);
  REQUIRE(filter);
  const std::size_t settle = taps->size();
  auto x = weir::test::sine(kRate, f, 1.0, settle + kMeasure);
  for (std::size_t at = 0; at < x.size(); at += 333) {
    const std::size_t n = std::min<std::size_t>(333, x.size() - at);
    const std::span<float> block(x.data() + at, n);
    filter->process(block, block);  // in place
  }
  return weir::test::to_db(weir::test::tone_amplitude(std::span<const float>(x).subspan(settle), f, kRate));
}

void check_pass(const FirSpec& s, std::initializer_list<double> frequencies) {
  for (const double f : frequencies) {
    CAPTURE(f);
    CHECK(std::abs(measured_gain_db(s, f)) < 0.1);
  }
}

void check_stop(const FirSpec& s, std::initializer_list<double> frequencies, double below_db) {
  for (const double f : frequencies) {
    CAPTURE(f);
    CHECK(measured_gain_db(s, f) < below_db);
  }
}

}  // namespace

TEST_SUITE("dsp.fir") {

TEST_CASE("a Hamming low-pass passes within 0.1 dB, is -6 dB at the cutoff and stops below -50 dB") {
  const FirSpec s = spec(FirBand::lowpass, 1000);
  check_pass(s, {20, 400, 700});
  CHECK(measured_gain_db(s, 1000) == doctest::Approx(-6.02).epsilon(0.02));
  check_stop(s, {1400, 2000, 3000, 4900}, -50);
}

TEST_CASE("a Blackman low-pass stops below -70 dB") {
  check_stop(spec(FirBand::lowpass, 1000, 0, WindowKind::blackman), {1700, 2500, 4000}, -70);
}

TEST_CASE("a high-pass stops below its cutoff and passes above it") {
  const FirSpec s = spec(FirBand::highpass, 2000);
  check_stop(s, {10, 500, 1000, 1600}, -50);
  check_pass(s, {2500, 3500, 4990});
}

TEST_CASE("a band-pass passes its band and stops both sides") {
  const FirSpec s = spec(FirBand::bandpass, 1500, 3000);
  check_pass(s, {2000, 2250, 2500});
  check_stop(s, {100, 900, 3600, 4500}, -50);
}

TEST_CASE("a band-stop stops its band and passes both sides") {
  const FirSpec s = spec(FirBand::bandstop, 1500, 3000);
  check_stop(s, {2000, 2250, 2500}, -50);
  check_pass(s, {10, 900, 3600, 4900});
}

TEST_CASE("the filter's output does not depend on how the input is cut into blocks") {
  auto taps = weir::dsp::design_fir(spec(FirBand::bandpass, 1000, 2000));
  REQUIRE(taps);
  const auto x = weir::test::noise(kRate, 1.0, 5000, 13);
  std::vector<float> reference;
  for (const std::size_t block : {std::size_t{1}, std::size_t{7}, std::size_t{100}, std::size_t{101}, x.size()}) {
    CAPTURE(block);
    auto filter = FirFilter::create(*taps);
    REQUIRE(filter);
    std::vector<float> y(x.size());
    for (std::size_t at = 0; at < x.size(); at += block) {
      const std::size_t n = std::min(block, x.size() - at);
      filter->process(std::span<const float>(x).subspan(at, n), std::span<float>(y).subspan(at, n));
    }
    if (reference.empty()) reference = y;
    CHECK(y == reference);
  }
}

TEST_CASE("an impulse comes out as the taps, delayed by nothing") {
  auto filter = FirFilter::create({0.25F, 0.5F, 0.25F});
  REQUIRE(filter);
  const float x[5] = {1, 0, 0, 0, 0};
  float y[5] = {};
  filter->process(x, y);
  CHECK(y[0] == 0.25F);
  CHECK(y[1] == 0.5F);
  CHECK(y[2] == 0.25F);
  CHECK(y[3] == 0.0F);
  CHECK(filter->group_delay_samples() == 1.0);
}

TEST_CASE("a bad design names the parameter, its value and the range") {
  auto above = weir::dsp::design_fir(spec(FirBand::lowpass, 5000));
  REQUIRE_FALSE(above);
  CHECK(above.error().what.find("cutoff 5000 Hz") != std::string::npos);
  CHECK(above.error().what.find("Nyquist") != std::string::npos);

  auto inverted = weir::dsp::design_fir(spec(FirBand::bandpass, 3000, 2000));
  REQUIRE_FALSE(inverted);
  CHECK(inverted.error().what.find("3000 .. 2000") != std::string::npos);

  FirSpec even = spec(FirBand::highpass, 1000);
  even.taps = 100;
  auto even_taps = weir::dsp::design_fir(even);
  REQUIRE_FALSE(even_taps);
  CHECK(even_taps.error().what.find("odd") != std::string::npos);

  FirSpec few = spec(FirBand::lowpass, 1000);
  few.taps = 2;
  CHECK_FALSE(weir::dsp::design_fir(few));
  CHECK_FALSE(FirFilter::create({}));
}

}  // TEST_SUITE

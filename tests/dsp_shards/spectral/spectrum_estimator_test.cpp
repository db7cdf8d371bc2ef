#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "dsp_test_support.hpp"
#include "weir/dsp/spectrum_estimator.hpp"

using weir::dsp::Averaging;
using weir::dsp::SpectrumEstimator;
using weir::dsp::SpectrumOutput;
using weir::dsp::WindowKind;

namespace {

constexpr std::uint32_t kSize = 1024;
constexpr double kRate = 10240;  // 10 Hz bins
constexpr double kBinHz = kRate / kSize;

struct WindowCase {
  WindowKind kind;
  double half_bin_loss_db;  // published scalloping loss half a bin off
};
// Harris (1978); flattop HFT95 from Heinzel et al. (2002).
constexpr WindowCase kWindows[] = {{WindowKind::rectangular, 3.92}, {WindowKind::hann, 1.42},
                                   {WindowKind::hamming, 1.75},     {WindowKind::blackman, 1.10},
                                   {WindowKind::blackman_harris, 0.83}, {WindowKind::flattop, 0.0044}};

std::vector<float> one_spectrum(WindowKind window, SpectrumOutput output, bool db, std::span<const float> x) {
  auto config = weir::test::spectrum_config(kSize, kRate);
  config.window.kind = window;
  config.output = output;
  config.db = db;
  auto estimator = SpectrumEstimator::create(config);
  REQUIRE(estimator);
  const auto spectra = weir::test::run_spectra(*estimator, x, 500);
  REQUIRE(spectra.size() == 1);
  return spectra[0];
}

std::size_t peak_bin(const std::vector<float>& s) {
  return static_cast<std::size_t>(std::max_element(s.begin(), s.end()) - s.begin());
}

}  // namespace

TEST_SUITE("dsp.spectrum") {

TEST_CASE("a sine on a bin reads its exact amplitude and power in every window") {
  const double amplitude = 1.5;
  const auto x = weir::test::sine(kRate, 100 * kBinHz, amplitude, kSize);
  for (const auto& w : kWindows) {
    CAPTURE(weir::dsp::window_name(w.kind));
    const auto a = one_spectrum(w.kind, SpectrumOutput::amplitude, false, x);
    REQUIRE(a.size() == kSize / 2 + 1);
    CHECK(peak_bin(a) == 100);
    CHECK(a[100] == doctest::Approx(amplitude).epsilon(1e-4));
    const auto p = one_spectrum(w.kind, SpectrumOutput::power, false, x);
    CHECK(p[100] == doctest::Approx(amplitude * amplitude / 2).epsilon(2e-4));
    const auto p_db = one_spectrum(w.kind, SpectrumOutput::power, true, x);
    CHECK(p_db[100] == doctest::Approx(10 * std::log10(amplitude * amplitude / 2)).epsilon(1e-4));
  }
}

TEST_CASE("a sine half a bin off reads low by each window's scalloping loss") {
  const double amplitude = 1.0;
  const auto x = weir::test::sine(kRate, 100.5 * kBinHz, amplitude, kSize);
  for (const auto& w : kWindows) {
    CAPTURE(weir::dsp::window_name(w.kind));
    const auto a = one_spectrum(w.kind, SpectrumOutput::amplitude, false, x);
    const std::size_t peak = peak_bin(a);
    CHECK((peak == 100 || peak == 101));
    const double loss_db = -weir::test::to_db(a[peak] / amplitude);
    CHECK(std::abs(loss_db - w.half_bin_loss_db) < 0.05);
  }
  const auto flat = one_spectrum(WindowKind::flattop, SpectrumOutput::amplitude, true, x);
  CHECK(std::abs(flat[peak_bin(flat)]) < 0.1);  // flat-top: within 0.1 dB of 0 dBV anywhere between bins
}

TEST_CASE("a DC level reads itself in bin 0, not doubled") {
  std::vector<float> x(kSize, 0.75F);
  const auto a = one_spectrum(WindowKind::hann, SpectrumOutput::amplitude, false, x);
  CHECK(a[0] == doctest::Approx(0.75).epsilon(1e-5));
  const auto p = one_spectrum(WindowKind::hann, SpectrumOutput::power, false, x);
  CHECK(p[0] == doctest::Approx(0.75 * 0.75).epsilon(1e-5));
}

TEST_CASE("white noise reads 2 sigma^2 / fs as PSD and sums to sigma^2 as power over the ENBW") {
  const double sigma = 0.5;
  const std::uint32_t frames = 64;
  const auto x = weir::test::noise(kRate, sigma, std::size_t{kSize} * frames, 7);
  for (const WindowKind kind : {WindowKind::rectangular, WindowKind::hann, WindowKind::flattop}) {
    CAPTURE(weir::dsp::window_name(kind));
    auto config = weir::test::spectrum_config(kSize, kRate);
    config.window.kind = kind;
    config.averaging = Averaging::linear;
    config.averages = frames;
    config.output = SpectrumOutput::psd;
    auto psd_estimator = SpectrumEstimator::create(config);
    REQUIRE(psd_estimator);
    const auto psd = weir::test::run_spectra(*psd_estimator, x, 4096);
    REQUIRE(psd.size() == 1);
    const double mean_psd = std::accumulate(psd[0].begin() + 1, psd[0].end() - 1, 0.0) / (kSize / 2 - 1);
    CHECK(mean_psd == doctest::Approx(2 * sigma * sigma / kRate).epsilon(0.03));

    config.output = SpectrumOutput::power;
    auto power_estimator = SpectrumEstimator::create(config);
    REQUIRE(power_estimator);
    const auto power = weir::test::run_spectra(*power_estimator, x, 4096);
    REQUIRE(power.size() == 1);
    const double total = std::accumulate(power[0].begin(), power[0].end(), 0.0);
    CHECK(total / power_estimator->gains().enbw_bins == doctest::Approx(sigma * sigma).epsilon(0.03));
  }
}

TEST_CASE("linear averaging emits one spectrum every K frames") {
  auto config = weir::test::spectrum_config(256, kRate);
  config.averaging = Averaging::linear;
  config.averages = 4;
  auto estimator = SpectrumEstimator::create(config);
  REQUIRE(estimator);
  CHECK(estimator->spectra_per_second() == doctest::Approx(kRate / 256 / 4));
  const auto x = weir::test::noise(kRate, 1.0, 256 * 10, 3);
  std::uint64_t emitted = 0;
  for (std::size_t at = 0; at < x.size(); at += 100) {
    const std::size_t n = std::min<std::size_t>(100, x.size() - at);
    emitted += estimator->process(std::span<const float>(x).subspan(at, n), [](std::span<const float>) {});
    CHECK(emitted == (at + n) / 256 / 4);
  }
  CHECK(estimator->frames() == 10);
  CHECK(estimator->spectra() == 2);
}

TEST_CASE("exponential averaging moves toward a new level by (1 - alpha) per frame") {
  const std::uint32_t n = 256;
  const double alpha = 0.25;
  auto config = weir::test::spectrum_config(n, kRate);
  config.window.kind = WindowKind::rectangular;
  config.averaging = Averaging::exponential;
  config.alpha = alpha;
  auto estimator = SpectrumEstimator::create(config);
  REQUIRE(estimator);
  const double f = 16 * kRate / n;  // on bin 16: every frame starts at phase 0 and reads exactly
  const auto before = weir::test::sine(kRate, f, 1.0, n * 4);
  const auto after = weir::test::sine(kRate, f, 2.0, n * 12);
  const auto first = weir::test::run_spectra(*estimator, before, n);
  REQUIRE(first.size() == 4);  // one spectrum every frame
  for (const auto& s : first) CHECK(s[16] == doctest::Approx(0.5).epsilon(1e-4));
  const auto second = weir::test::run_spectra(*estimator, after, n);
  REQUIRE(second.size() == 12);
  for (std::size_t i = 0; i < second.size(); ++i) {
    const double expected = 2.0 + (0.5 - 2.0) * std::pow(1 - alpha, static_cast<double>(i + 1));
    CHECK(second[i][16] == doctest::Approx(expected).epsilon(1e-4));
  }
}

TEST_CASE("overlap shortens the hop and adds frames") {
  const auto x = weir::test::noise(kRate, 1.0, 256 * 8, 5);
  struct Case {
    double overlap;
    std::size_t hop;
    std::uint64_t frames;
  };
  for (const Case c : {Case{0.0, 256, 8}, Case{0.5, 128, 15}, Case{0.75, 64, 29}, Case{0.95, 13, 138}}) {
    CAPTURE(c.overlap);
    auto config = weir::test::spectrum_config(256, kRate);
    config.overlap = c.overlap;
    auto estimator = SpectrumEstimator::create(config);
    REQUIRE(estimator);
    CHECK(estimator->hop() == c.hop);
    CHECK(weir::test::run_spectra(*estimator, x, 77).size() == c.frames);
    CHECK(estimator->frames() == c.frames);
  }
}

TEST_CASE("spectra do not depend on how the input is cut into blocks") {
  auto config = weir::test::spectrum_config(256, kRate);
  config.overlap = 0.5;
  config.averaging = Averaging::linear;
  config.averages = 3;
  const auto x = weir::test::noise(kRate, 1.0, 256 * 20, 11);
  std::vector<std::vector<float>> reference;
  for (const std::size_t block : {std::size_t{1}, std::size_t{37}, std::size_t{256}, std::size_t{1000}, x.size()}) {
    CAPTURE(block);
    auto estimator = SpectrumEstimator::create(config);
    REQUIRE(estimator);
    const auto spectra = weir::test::run_spectra(*estimator, x, block);
    if (reference.empty()) reference = spectra;
    CHECK(spectra == reference);
  }
  CHECK(reference.size() == 13);  // 39 frames of hop 128 in 5120 samples, 3 per spectrum
}

TEST_CASE("integer samples read the same as their float values") {
  auto config = weir::test::spectrum_config(256, kRate);
  const auto x = weir::test::sine(kRate, 1000, 3000, 512);
  std::vector<std::int16_t> codes(x.size());
  std::vector<float> rounded(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    codes[i] = static_cast<std::int16_t>(std::lround(x[i]));
    rounded[i] = codes[i];
  }
  auto from_codes = SpectrumEstimator::create(config);
  auto from_floats = SpectrumEstimator::create(config);
  REQUIRE(from_codes);
  REQUIRE(from_floats);
  std::vector<std::vector<float>> a;
  from_codes->process(weir::core::Dtype::i16, codes.data(), codes.size(),
                      [&](std::span<const float> s) { a.emplace_back(s.begin(), s.end()); });
  const auto b = weir::test::run_spectra(*from_floats, rounded, rounded.size());
  REQUIRE(a.size() == 2);
  CHECK(a == b);
}

TEST_CASE("a bad configuration names the field, its value and the range") {
  auto config = weir::test::spectrum_config(256, kRate);
  config.overlap = 0.96;
  auto overlap = SpectrumEstimator::create(config);
  REQUIRE_FALSE(overlap);
  CHECK(overlap.error().what.find("overlap 0.96") != std::string::npos);
  CHECK(overlap.error().what.find("0.95") != std::string::npos);

  config = weir::test::spectrum_config(256, kRate);
  config.averaging = Averaging::exponential;
  config.alpha = 0;
  auto alpha = SpectrumEstimator::create(config);
  REQUIRE_FALSE(alpha);
  CHECK(alpha.error().what.find("alpha 0") != std::string::npos);

  config = weir::test::spectrum_config(2 * 1031, kRate);
  auto prime = SpectrumEstimator::create(config);
  REQUIRE_FALSE(prime);
  CHECK(prime.error().what.find("size 2062 has the prime factor 1031") != std::string::npos);
  CHECK(prime.error().what.find("e.g. 2080") != std::string::npos);

  config = weir::test::spectrum_config(256, 0);
  CHECK_FALSE(SpectrumEstimator::create(config));
  config = weir::test::spectrum_config(1, kRate);
  CHECK_FALSE(SpectrumEstimator::create(config));
}

}  // TEST_SUITE

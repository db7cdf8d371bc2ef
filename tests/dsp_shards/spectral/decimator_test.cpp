#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "dsp_test_support.hpp"
#include "weir/dsp/decimator.hpp"

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

}  // namespace

TEST_SUITE("dsp.decimator") {

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

#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numbers>
#include <vector>

#include "weir/acq/signal_generator.hpp"
#include "weir/core/channel.hpp"

using namespace weir::acq;
using weir::core::Dtype;

namespace {

constexpr double kTwoPi = 2 * std::numbers::pi;

SignalGenerator make(const SignalConfig& config, std::uint32_t block = 256) {
  auto generator = SignalGenerator::create(config, block);
  REQUIRE_MESSAGE(generator, (generator ? "" : generator.error().what));
  return std::move(*generator);
}

// Fills `total` samples in blocks of `block`.
std::vector<float> run(SignalGenerator& generator, std::size_t total, std::size_t block) {
  std::vector<float> out(total);
  for (std::size_t at = 0; at < total; at += block)
    generator.fill(std::span<float>(out.data() + at, std::min(block, total - at)));
  return out;
}

SignalConfig pulses(double rate_hz, std::uint64_t seed) {
  SignalConfig c;
  c.kind = SignalKind::pulses;
  c.sample_rate_hz = rate_hz;
  c.seed = seed;
  return c;
}

// Pulse heights read off the waveform: arm below half the threshold, trigger on crossing it, and
// take the maximum of the following `window` samples.
std::vector<double> pulse_heights(const std::vector<float>& x, double threshold, std::size_t window) {
  std::vector<double> heights;
  bool armed = true;
  for (std::size_t i = 1; i + window < x.size(); ++i) {
    if (!armed) {
      armed = x[i] < threshold / 2;
      continue;
    }
    if (x[i] <= threshold || x[i - 1] > threshold) continue;
    double peak = x[i];
    for (std::size_t j = i; j < i + window; ++j) peak = std::max(peak, static_cast<double>(x[j]));
    heights.push_back(peak);
    armed = false;
  }
  return heights;
}

}  // namespace

TEST_SUITE("acquisition.sim") {

TEST_CASE("a sine matches sin(2 pi f t) across block boundaries") {
  SignalConfig c;
  c.kind = SignalKind::sine;
  c.sample_rate_hz = 48'000;
  c.frequency_hz = 1234.5;  // not a divisor of the rate: blocks end at every phase
  c.amplitude = 1.0;
  SignalGenerator generator = make(c, 100);
  const std::vector<float> x = run(generator, 6000, 100);
  double worst = 0;
  for (std::size_t n = 0; n < x.size(); ++n) {
    const double expected = std::sin(kTwoPi * c.frequency_hz * static_cast<double>(n) / c.sample_rate_hz);
    worst = std::max(worst, std::abs(x[n] - expected));
  }
  CHECK(worst < 2e-6);
  CHECK(generator.position() == 6000);
}

TEST_CASE("a square wave follows the sign of the sine it is built on") {
  SignalConfig c;
  c.kind = SignalKind::square;
  c.sample_rate_hz = 10'000;
  c.frequency_hz = 100;
  c.amplitude = 2.0;
  c.offset = 0.5;
  SignalGenerator generator = make(c, 64);
  const std::vector<float> x = run(generator, 1000, 64);
  for (std::size_t n = 0; n < x.size(); ++n) {
    const double phase = std::fmod(c.frequency_hz * static_cast<double>(n) / c.sample_rate_hz, 1.0);
    if (std::abs(phase - 0.5) < 1e-9 || phase < 1e-9) continue;  // an edge: either level is right
    CHECK(x[n] == doctest::Approx(phase < 0.5 ? 2.5 : -1.5));
  }
}

TEST_CASE("a chirp sweeps its frequency linearly and restarts with a continuous phase") {
  SignalConfig c;
  c.kind = SignalKind::chirp;
  c.sample_rate_hz = 100'000;
  c.frequency_hz = 100;
  c.chirp_end_hz = 5'000;
  c.chirp_sweep_s = 0.1;
  SignalGenerator generator = make(c, 333);
  const std::vector<float> x = run(generator, 15'000, 333);  // one sweep of 10000 samples and half of the next
  const double k = (c.chirp_end_hz - c.frequency_hz) / c.chirp_sweep_s;  // Hz per second
  double worst = 0;
  for (std::size_t n = 0; n < 10'000; ++n) {
    const double t = static_cast<double>(n) / c.sample_rate_hz;
    worst = std::max(worst, std::abs(x[n] - std::sin(kTwoPi * (c.frequency_hz * t + k * t * t / 2))));
  }
  CHECK(worst < 1e-4);
  // No jump where the sweep restarts: neighbours differ by at most the fastest slope allows.
  const double max_step = kTwoPi * c.chirp_end_hz / c.sample_rate_hz;
  for (std::size_t n = 9'990; n < 10'010; ++n) CHECK(std::abs(x[n + 1] - x[n]) <= max_step + 1e-6);
}

TEST_CASE("gaussian noise has the configured mean and sigma") {
  SignalConfig c;
  c.kind = SignalKind::noise;
  c.sample_rate_hz = 1e6;
  c.amplitude = 0.25;
  c.offset = 1.0;
  c.seed = 3;
  SignalGenerator generator = make(c, 1000);
  const std::vector<float> x = run(generator, 200'000, 1000);
  double sum = 0, sum2 = 0;
  for (float v : x) {
    sum += v;
    sum2 += static_cast<double>(v) * v;
  }
  const double n = static_cast<double>(x.size());
  const double mean = sum / n;
  const double sigma = std::sqrt(sum2 / n - mean * mean);
  CHECK(mean == doctest::Approx(1.0).epsilon(0.005));
  CHECK(sigma == doctest::Approx(0.25).epsilon(0.02));
}

TEST_CASE("the same seed gives identical pulse trains and another seed a different one") {
  SignalGenerator a = make(pulses(1e6, 42), 500);
  SignalGenerator b = make(pulses(1e6, 42), 500);
  SignalGenerator other = make(pulses(1e6, 43), 500);
  const std::vector<float> xa = run(a, 50'000, 500);
  const std::vector<float> xb = run(b, 50'000, 500);
  const std::vector<float> xo = run(other, 50'000, 500);
  CHECK(std::memcmp(xa.data(), xb.data(), xa.size() * sizeof(float)) == 0);
  CHECK(std::memcmp(xa.data(), xo.data(), xa.size() * sizeof(float)) != 0);
  CHECK(a.pulse_count() == b.pulse_count());
  CHECK(a.pulse_count() > 0);
}

TEST_CASE("the samples do not depend on how the stream is cut into blocks") {
  SignalGenerator whole = make(pulses(1e6, 9), 4096);
  SignalGenerator pieces = make(pulses(1e6, 9), 7);
  const std::vector<float> x = run(whole, 20'000, 4096);
  const std::vector<float> y = run(pieces, 20'000, 7);
  CHECK(std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0);

  SUBCASE("skipping a block leaves later samples where they were") {
    SignalGenerator skipping = make(pulses(1e6, 9), 4096);
    skipping.skip(10'000);
    std::vector<float> rest(10'000);
    skipping.fill(rest);
    CHECK(std::memcmp(rest.data(), x.data() + 10'000, rest.size() * sizeof(float)) == 0);
  }
}

TEST_CASE("pulses arrive at the configured mean count rate, with Poisson scatter") {
  SignalConfig c = pulses(1e6, 11);
  c.pulses.count_rate_hz = 50'000;
  c.pulses.decay_s = 5e-6;
  c.pulses.baseline_noise = 0;
  constexpr std::size_t kWindow = 1000;  // 1 ms: 50 pulses expected per window
  constexpr std::size_t kWindows = 2000;
  SignalGenerator generator = make(c, kWindow);
  std::vector<float> block(kWindow);
  std::vector<double> counts;
  std::uint64_t before = 0;
  for (std::size_t w = 0; w < kWindows; ++w) {
    generator.fill(block);
    counts.push_back(static_cast<double>(generator.pulse_count() - before));
    before = generator.pulse_count();
  }
  const double expected = c.pulses.count_rate_hz * kWindows * kWindow / c.sample_rate_hz;  // 100000
  CHECK(std::abs(static_cast<double>(generator.pulse_count()) - expected) < 4 * std::sqrt(expected));
  double mean = 0, var = 0;
  for (double n : counts) mean += n;
  mean /= kWindows;
  for (double n : counts) var += (n - mean) * (n - mean);
  var /= kWindows - 1;
  CHECK(var / mean == doctest::Approx(1.0).epsilon(0.15));  // Poisson: variance equals mean
}

TEST_CASE("the pulse-height histogram shows the configured lines at their amplitudes") {
  SignalConfig c = pulses(1e6, 5);
  c.amplitude = 1.0;
  c.pulses.count_rate_hz = 250;  // sparse: little pile-up
  c.pulses.rise_s = 2e-6;        // two samples: the sampled peak is within 1 % of the true one
  c.pulses.decay_s = 10e-6;
  const std::vector<float> x = [&] {
    SignalGenerator generator = make(c, 10'000);
    return run(generator, 4'000'000, 10'000);
  }();
  const std::vector<double> heights = pulse_heights(x, 0.05, 20);
  REQUIRE(heights.size() > 700);

  const auto in = [&](double lo, double hi) {
    std::size_t n = 0;
    for (double h : heights) n += (h >= lo && h < hi) ? 1 : 0;
    return n;
  };
  const double weights = 0.4 + 0.3 + 0.3 + c.pulses.continuum_weight;
  // A stretch of pure continuum, as wide as a line window, for contrast.
  const std::size_t continuum = in(0.90, 0.90 + 0.04 * 1.2);
  for (const SpectrumLine& line : default_spectrum_lines()) {
    CAPTURE(line.height);
    const double lo = line.height * 0.98, hi = line.height * 1.02;
    const std::size_t n = in(lo, hi);
    const double expected = static_cast<double>(heights.size()) * line.weight / weights;
    CHECK(static_cast<double>(n) > 0.7 * expected);
    CHECK(n > 5 * (continuum + 1));
    double sum = 0;
    for (double h : heights) sum += (h >= lo && h < hi) ? h : 0;
    CHECK(sum / static_cast<double>(n) == doctest::Approx(line.height).epsilon(0.01));
  }
}

TEST_CASE("integer dtypes saturate at the end codes instead of wrapping") {
  SignalConfig c;
  c.kind = SignalKind::sine;
  c.sample_rate_hz = 1000;
  c.frequency_hz = 10;
  c.amplitude = 20;  // twice the full scale
  SignalGenerator generator = make(c, 100);
  std::vector<std::byte> bytes(100 * sizeof(std::int16_t));
  const FillResult filled = generator.fill(Dtype::i16, bytes, 100, 10.0);
  std::uint64_t clipped = 0;
  for (std::size_t n = 0; n < 100; ++n) {
    std::int16_t code;
    std::memcpy(&code, bytes.data() + n * sizeof(code), sizeof(code));
    const double v = 20 * std::sin(kTwoPi * 10 * static_cast<double>(n) / 1000);
    CAPTURE(n);
    if (v >= 10) {
      CHECK(code == std::numeric_limits<std::int16_t>::max());
      ++clipped;
    } else if (v < -10) {
      CHECK(code == std::numeric_limits<std::int16_t>::min());
      ++clipped;
    } else {
      CHECK(code == static_cast<std::int16_t>(std::nearbyint(v / 10 * 32768)));
    }
  }
  CHECK(clipped > 0);
  CHECK(filled.saturated == clipped);

  SUBCASE("unsigned codes are offset binary: 0 V at mid-scale") {
    SignalConfig dc;
    dc.kind = SignalKind::square;
    dc.sample_rate_hz = 1000;
    dc.frequency_hz = 0;  // stays in the first half cycle: +amplitude
    dc.amplitude = 0;
    SignalGenerator zero = make(dc, 4);
    std::array<std::byte, 4> u8{};
    CHECK(zero.fill(Dtype::u8, u8, 4, 10.0).saturated == 0);
    CHECK(std::to_integer<int>(u8[0]) == 128);
  }
}

TEST_CASE("every integer dtype clips far out-of-range values to its end codes") {
  SignalConfig c;
  c.kind = SignalKind::square;
  c.sample_rate_hz = 4;
  c.frequency_hz = 1;  // samples +A, +A, -A, -A
  c.amplitude = 1e30;
  const auto check = [&]<class T>(Dtype dtype, T /*tag*/) {
    CAPTURE(weir::core::dtype_name(dtype));
    SignalGenerator generator = make(c, 4);
    std::array<std::byte, 4 * sizeof(T)> bytes{};
    CHECK(generator.fill(dtype, bytes, 4, 10.0).saturated == 4);
    T first, third;
    std::memcpy(&first, bytes.data(), sizeof(T));
    std::memcpy(&third, bytes.data() + 2 * sizeof(T), sizeof(T));
    CHECK(first == std::numeric_limits<T>::max());
    CHECK(third == std::numeric_limits<T>::min());
  };
  check(Dtype::i8, std::int8_t{});
  check(Dtype::u8, std::uint8_t{});
  check(Dtype::i16, std::int16_t{});
  check(Dtype::u16, std::uint16_t{});
  check(Dtype::i32, std::int32_t{});
  check(Dtype::u32, std::uint32_t{});
  check(Dtype::i64, std::int64_t{});

  SUBCASE("complex samples carry the signal in the real part") {
    c.amplitude = 1.5;
    SignalGenerator generator = make(c, 4);
    std::array<float, 8> iq{};
    CHECK(generator.fill(Dtype::c64, std::as_writable_bytes(std::span(iq)), 4, 10.0).saturated == 0);
    CHECK(iq == std::array<float, 8>{1.5F, 0, 1.5F, 0, -1.5F, 0, -1.5F, 0});
  }
}

TEST_CASE("a configuration the generator cannot honour is refused with the reason") {
  SignalConfig c;
  c.sample_rate_hz = 1000;
  c.frequency_hz = 600;
  auto above_nyquist = SignalGenerator::create(c, 16);
  REQUIRE_FALSE(above_nyquist);
  CHECK(above_nyquist.error().what.find("Nyquist") != std::string::npos);

  SignalConfig p = pulses(1e6, 0);
  p.pulses.rise_s = p.pulses.decay_s;
  auto slow_rise = SignalGenerator::create(p, 16);
  REQUIRE_FALSE(slow_rise);
  CHECK(slow_rise.error().what.find("rise") != std::string::npos);

  auto undersampled = SignalGenerator::create(pulses(10'000, 0), 16);  // 50 us decay: half a sample
  REQUIRE_FALSE(undersampled);
  CHECK(undersampled.error().what.find("decay") != std::string::npos);

  CHECK_FALSE(SignalGenerator::create(SignalConfig{}, 16));  // no sample rate
  CHECK(parse_signal("pulses").value() == SignalKind::pulses);
  CHECK_FALSE(parse_signal("sawtooth"));
}

}  // TEST_SUITE

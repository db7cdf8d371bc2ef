#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <optional>
#include <span>
#include <vector>

#include "weir/acq/signal_generator.hpp"
#include "weir/dsp/mca.hpp"

using namespace weir::dsp;
using weir::acq::SignalConfig;
using weir::acq::SignalGenerator;
using weir::acq::SignalKind;

namespace {

constexpr double kRate = 1e6;          // 1 MS/s: the simulator's default pulses are 0.5 us rise, 50 us decay
constexpr std::uint32_t kBlock = 4096;

SignalConfig pulses(double count_rate_hz, std::uint64_t seed) {
  SignalConfig c;
  c.kind = SignalKind::pulses;
  c.sample_rate_hz = kRate;
  c.seed = seed;
  c.pulses.count_rate_hz = count_rate_hz;
  return c;
}

McaConfig shaping(double gain = 1.0) {
  McaConfig c;
  c.rate_hz = kRate;
  c.rise = 10;  // 10 us
  c.flat = 3;   // covers the pulses' rise and the trigger's walk
  c.tau = 50;   // the simulator's decay, in samples
  c.fast_rise = 1;
  c.fast_flat = 0;
  c.threshold = 0.05;
  c.bins = 2048;
  c.range = 1.5;
  c.gain = gain;
  c.baseline = 256;
  c.pileup_reject = true;
  return c;
}

struct Run {
  Mca mca;
  std::uint64_t generated = 0;
};

// Streams `seconds` of the generator through a fresh MCA, block by block, as f32 samples would
// arrive from an arena channel. `extra` (if any) is added to every sample.
Run run(const SignalConfig& signal, const McaConfig& config, double seconds, const SignalConfig* extra = nullptr) {
  auto generator = SignalGenerator::create(signal, kBlock);
  REQUIRE(generator);
  std::optional<SignalGenerator> other;
  if (extra != nullptr) {
    auto g = SignalGenerator::create(*extra, kBlock);
    REQUIRE(g);
    other.emplace(std::move(*g));
  }
  auto mca = Mca::create(config);
  REQUIRE_MESSAGE(mca, (mca ? "" : mca.error().what));
  std::vector<float> block(kBlock), more(kBlock);
  std::vector<double> samples(kBlock);
  const auto total = static_cast<std::uint64_t>(seconds * kRate);
  for (std::uint64_t at = 0; at < total; at += kBlock) {
    generator->fill(std::span<float>(block));
    if (other) other->fill(std::span<float>(more));
    for (std::size_t i = 0; i < kBlock; ++i)
      samples[i] = static_cast<double>(block[i]) + (other ? static_cast<double>(more[i]) : 0.0);
    mca->process(samples, at);
  }
  return Run{std::move(*mca), generator->pulse_count()};
}

struct Peak {
  double centroid = 0;  // in height units
  double fwhm = 0;
  double counts = 0;
};

// The peak near `expected`: the highest bin of the 3-bin smoothed spectrum within +-4 %, its full
// width at half maximum from linearly interpolated half-height crossings, and the centroid of the
// raw counts within +-1.5 FWHM of it.
Peak find_peak(std::span<const std::uint32_t> spectrum, double range, double expected) {
  const std::size_t n = spectrum.size();
  std::vector<double> smooth(n, 0.0);
  for (std::size_t b = 1; b + 1 < n; ++b)
    smooth[b] = (static_cast<double>(spectrum[b - 1]) + spectrum[b] + spectrum[b + 1]) / 3;
  const double width = range / static_cast<double>(n);
  const auto bin_of = [&](double h) { return std::min(n - 1, static_cast<std::size_t>(std::max(h, 0.0) / width)); };
  std::size_t top = bin_of(expected * 0.96);
  for (std::size_t b = top; b <= bin_of(expected * 1.04); ++b)
    if (smooth[b] > smooth[top]) top = b;
  const double half = smooth[top] / 2;
  std::size_t left = top, right = top;
  while (left > 0 && smooth[left] >= half) --left;
  while (right + 1 < n && smooth[right] >= half) ++right;
  // Crossings between the last bin above half and the first below, in bin-centre coordinates.
  const auto cross = [&](std::size_t above, std::size_t below) {
    const double frac = (smooth[above] - half) / (smooth[above] - smooth[below]);
    return static_cast<double>(above) + frac * (static_cast<double>(below) - static_cast<double>(above));
  };
  Peak p;
  p.fwhm = (cross(right - 1, right) - cross(left + 1, left)) * width;
  const double center = (static_cast<double>(top) + 0.5) * width;
  double sum = 0, weighted = 0;
  for (std::size_t b = bin_of(center - 1.5 * p.fwhm); b <= bin_of(center + 1.5 * p.fwhm); ++b) {
    sum += spectrum[b];
    weighted += spectrum[b] * (static_cast<double>(b) + 0.5) * width;
  }
  p.counts = sum;
  p.centroid = sum > 0 ? weighted / sum : 0;
  return p;
}

// Mean and relative standard deviation of the heights in a spectrum.
std::pair<double, double> spread(std::span<const std::uint32_t> spectrum, double range) {
  const double width = range / static_cast<double>(spectrum.size());
  double n = 0, sum = 0, sq = 0;
  for (std::size_t b = 0; b < spectrum.size(); ++b) {
    const double h = (static_cast<double>(b) + 0.5) * width;
    n += spectrum[b];
    sum += spectrum[b] * h;
    sq += spectrum[b] * h * h;
  }
  const double mean = sum / n;
  return {mean, std::sqrt(std::max(0.0, sq / n - mean * mean)) / mean};
}

// Pulser calibration: noiseless pulses of height exactly 1. The trapezoid measures the pulses'
// exponential (charge) amplitude, which for the simulator's peak-normalised two-exponential pulse
// is a few per cent above its peak; this measures that factor the way a lab would.
double pulser_gain() {
  SignalConfig pulser = pulses(1000, 99);
  pulser.pulses.lines = {{1.0, 1.0}};
  pulser.pulses.line_sigma = 0;
  pulser.pulses.continuum_weight = 0;
  pulser.pulses.baseline_noise = 0;
  McaConfig config = shaping();
  config.bins = 8192;
  const Run r = run(pulser, config, 0.5);
  const McaCounts counts = r.mca.counts();
  REQUIRE(counts.accepted > 300);
  // Only pulses closer than the fast filter resolves (~3 us: 0.3 % at 1 kHz) sum past the range.
  CHECK(counts.out_of_range <= counts.accepted / 100);
  const auto [mean, relative_sigma] = spread(r.mca.spectrum(), config.range);
  MESSAGE("pulser: " << counts.accepted << " pulses, relative sigma " << relative_sigma);
  CHECK(relative_sigma < 0.003);  // sub-sample arrival phase costs well under the 0.5 % line width
  return mean;
}

}  // namespace

TEST_SUITE("dsp.events.mca") {

TEST_CASE("the three lines of the simulator's spectrum appear at their heights with the expected resolution" *
          doctest::timeout(30)) {
  const double g = pulser_gain();
  MESSAGE("pulser: flat top / pulse peak = " << g);
  CHECK(g > 1.0);
  CHECK(g < 1.08);
  const McaConfig config = shaping(1.0 / g);
  const Run r = run(pulses(2000, 1), config, 4.0);
  const McaCounts counts = r.mca.counts();
  MESSAGE("generated " << r.generated << " accepted " << counts.accepted << " piled up " << counts.piled_up);
  for (const double line : {0.662, 1.173, 1.332}) {
    CAPTURE(line);
    const Peak p = find_peak(r.mca.spectrum(), config.range, line);
    const double fwhm_rel = p.fwhm / line;
    MESSAGE("line " << line << ": centroid " << p.centroid << " FWHM " << 100 * fwhm_rel << " % counts " << p.counts);
    CHECK(std::fabs(p.centroid - line) / line < 0.01);
    // 0.5 % sigma is 1.18 % FWHM; electronic noise and arrival phase add a little.
    CHECK(fwhm_rel > 0.009);
    CHECK(fwhm_rel < 0.03);
    CHECK(p.counts > 1000);
  }
}

TEST_CASE("at a high count rate pile-up is rejected, and live time corrects the rate" * doctest::timeout(30)) {
  // 5 kHz: pile-up within the 29-sample window is common (~25 %), while pulses closer than the
  // fast filter resolves (~3 samples at 1 MS/s) stay rare (~1.5 %).
  const double seconds = 2.0;
  for (const bool reject : {true, false}) {
    CAPTURE(reject);
    McaConfig config = shaping();
    config.pileup_reject = reject;
    const Run r = run(pulses(5000, 2), config, seconds);
    const McaCounts c = r.mca.counts();
    const double generated = static_cast<double>(r.generated);
    const double true_rate = generated / r.mca.real_s();
    const double measured_rate = static_cast<double>(c.accepted) / r.mca.live_s();
    MESSAGE("generated " << r.generated << " accepted " << c.accepted << " piled " << c.piled_up << " live "
                         << r.mca.live_s() << " s dead " << r.mca.dead_s() << " s rate " << measured_rate);
    CHECK(c.piled_up > 0);
    CHECK(r.mca.dead_s() > 0.1 * seconds);
    // Every pulse is accepted or rejected, except those below threshold or closer than the fast
    // filter resolves.
    const double seen = static_cast<double>(c.accepted + c.piled_up);
    CHECK(seen <= generated);
    CHECK(seen > 0.95 * generated);
    CHECK(std::fabs(measured_rate - true_rate) / true_rate < 0.05);
    CHECK(r.mca.live_s() + r.mca.dead_s() == doctest::Approx(r.mca.real_s()).epsilon(1e-12));
    CHECK(r.mca.real_s() == doctest::Approx(static_cast<double>(c.real_samples) / kRate));
  }
}

TEST_CASE("baseline restoration removes a slow hum from under the pulses" * doctest::timeout(30)) {
  SignalConfig hum;
  hum.kind = SignalKind::sine;
  hum.sample_rate_hz = kRate;
  hum.frequency_hz = 50;
  hum.amplitude = 0.05;
  McaConfig with = shaping(1 / 1.04);
  McaConfig without = with;
  without.baseline = 0;
  const Run restored = run(pulses(2000, 3), with, 1.5, &hum);
  const Run raw = run(pulses(2000, 3), without, 1.5, &hum);
  const double line = 0.662 * 1.0;
  const Peak a = find_peak(restored.mca.spectrum(), with.range, line);
  const Peak b = find_peak(raw.mca.spectrum(), without.range, line);
  MESSAGE("662 FWHM with restoration " << 100 * a.fwhm / line << " %, without " << 100 * b.fwhm / line << " %");
  CHECK(a.fwhm < 0.8 * b.fwhm);
  CHECK(a.fwhm / line < 0.03);
}

TEST_CASE("a gap restarts the analyser, and live + dead stays equal to real time") {
  auto mca = Mca::create(shaping());
  REQUIRE(mca);
  auto generator = SignalGenerator::create(pulses(5000, 4), kBlock);
  REQUIRE(generator);
  std::vector<float> block(kBlock);
  std::vector<double> samples(kBlock);
  std::uint64_t index = 0;
  for (int b = 0; b < 60; ++b) {
    generator->fill(std::span<float>(block));
    std::copy(block.begin(), block.end(), samples.begin());
    if (b == 30) index += 10 * kBlock;  // ten blocks lost upstream
    mca->process(samples, index);
    index += kBlock;
    CHECK(mca->live_s() + mca->dead_s() == doctest::Approx(mca->real_s()).epsilon(1e-12));
    CHECK(mca->dead_s() <= mca->real_s());
  }
  CHECK(mca->counts().gaps == 1);
  CHECK(mca->counts().real_samples == 60ULL * kBlock);
  CHECK(mca->counts().accepted > 0);
}

TEST_CASE("analyser settings out of range are refused naming the field") {
  McaConfig c = shaping();
  c.bins = 8;
  auto m = Mca::create(c);
  REQUIRE_FALSE(m);
  CHECK(m.error().what.find("bins = 8") != std::string::npos);
  c = shaping();
  c.threshold = 0;
  CHECK_FALSE(Mca::create(c));
  c = shaping();
  c.fast_rise = 20;
  m = Mca::create(c);
  REQUIRE_FALSE(m);
  CHECK(m.error().what.find("fast rise = 20") != std::string::npos);
  c = shaping();
  c.rise = 0;
  m = Mca::create(c);
  REQUIRE_FALSE(m);
  CHECK(m.error().what.find("rise = 0") != std::string::npos);
}

}  // TEST_SUITE

TEST_CASE("every pulse the counters count is one event, in order, with the height the histogram binned") {
  McaConfig config = shaping();
  config.max_events = 4096;
  auto mca = Mca::create(config);
  REQUIRE(mca);
  auto generator = SignalGenerator::create(pulses(20000, 7), kBlock);  // pile-up and out-of-range ones too
  REQUIRE(generator);
  std::vector<float> block(kBlock);
  std::vector<double> samples(kBlock);
  std::vector<std::uint32_t> histogram(config.bins);
  std::uint64_t index = 0, events = 0, piled = 0, out = 0, over = 0, cut = 0, last = 0;
  for (int b = 0; b < 80; ++b) {
    generator->fill(std::span<float>(block));
    std::copy(block.begin(), block.end(), samples.begin());
    if (b == 40) index += 3 * kBlock;  // a gap cuts whatever is being measured
    mca->process(samples, index);
    index += kBlock;
    for (const McaEvent& e : mca->events()) {
      CHECK(e.index >= last);  // in order
      last = e.index;
      ++events;
      piled += (e.flags & kMcaPileup) != 0;
      out += (e.flags & kMcaOutOfRange) != 0;
      over += (e.flags & kMcaOutOfRange) != 0 && e.height >= config.range;
      cut += (e.flags & kMcaCut) != 0;
      if (e.flags == 0) ++histogram[std::min<std::size_t>(config.bins - 1, static_cast<std::size_t>(e.height * config.bins / config.range))];
      if ((e.flags & kMcaCut) != 0) CHECK(std::isnan(e.height));
    }
    mca->clear_events();
  }
  const McaCounts c = mca->counts();
  CHECK(mca->events_dropped() == 0);
  CHECK(events == c.accepted + c.piled_up + c.discarded);
  CHECK(piled == c.piled_up);
  CHECK(out == c.out_of_range);
  CHECK(cut == c.discarded);
  CHECK(over == c.overflow);
  CHECK(out - over == c.underflow);
  CHECK(c.piled_up > 0);
  const auto spectrum = mca->spectrum();
  CHECK(std::equal(histogram.begin(), histogram.end(), spectrum.begin()));
}

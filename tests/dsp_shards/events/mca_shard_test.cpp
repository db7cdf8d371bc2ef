#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "weir/shard_fake_host.hpp"
#include "weir/acq/signal_generator.hpp"
#include "weir/core/event_record.hpp"
#include "weir/dsp/event_shards.hpp"

using namespace weir::shard_test;

namespace {

std::vector<std::uint32_t> spectrum_of(const FakeHost& fake, std::uint32_t output) {
  const std::string bytes = fake.last_key(output);
  const auto byte = [&bytes](std::size_t i) { return std::uint32_t{static_cast<unsigned char>(bytes[i])}; };
  std::vector<std::uint32_t> bins(bytes.size() / 4);
  for (std::size_t i = 0; i < bins.size(); ++i)
    bins[i] = byte(4 * i) | byte(4 * i + 1) << 8 | byte(4 * i + 2) << 16 | byte(4 * i + 3) << 24;
  return bins;
}

// The simulator's detector pulses (Poisson arrivals, the line spectrum) at `rate`, in blocks of `block`.
auto pulses(double rate, std::uint32_t block, std::uint64_t seed) {
  weir::acq::SignalConfig signal;
  signal.kind = weir::acq::SignalKind::pulses;
  signal.sample_rate_hz = rate;
  signal.seed = seed;
  return weir::acq::SignalGenerator::create(signal, block);
}

}  // namespace

TEST_SUITE("dsp.events.mca_shard") {

TEST_CASE("the mca shard declares the spectrum, live and dead time, and count keys") {
  const weir_shard_api* api = weir_builtin_mca(WEIR_SHARD_ABI_VERSION);
  REQUIRE(api != nullptr);
  CHECK(std::string(api->name) == "mca");
  CHECK(weir_builtin_mca(WEIR_SHARD_ABI_VERSION + 1) == nullptr);
  ShardConfig b("adc0", WEIR_DTYPE_I16, 4096, 1e6, "V", {{"bins", "512"}});
  auto [shard, error] = configure(*api, b.build());
  REQUIRE_MESSAGE(shard != nullptr, error);
  REQUIRE(b.config().output_count == 16);
  for (const char* name : {"adc0.underflow", "adc0.overflow"})  // the two halves of out_of_range, declared last
    CHECK(b.config().outputs[output_index(b.config(), name)].key_type == WEIR_KEY_U64);
  const auto& spectrum = b.config().outputs[output_index(b.config(), "adc0.spectrum")];
  CHECK(spectrum.kind == WEIR_OUTPUT_KEY);
  CHECK(spectrum.key_type == WEIR_KEY_ARRAY);
  CHECK(spectrum.array_dtype == WEIR_DTYPE_U32);
  CHECK(spectrum.array_rank == 1);
  CHECK(spectrum.array_dims[0] == 512);
  CHECK(spectrum.array_dims[1] == 0);
  CHECK(spectrum.max_bytes == 512 * 4);
  const auto& axis = b.config().outputs[output_index(b.config(), "adc0.spectrum_axis")];
  CHECK(axis.key_type == WEIR_KEY_ARRAY);
  CHECK(axis.array_dtype == WEIR_DTYPE_F32);
  CHECK(axis.array_rank == 1);
  CHECK(axis.array_dims[0] == 512);
  CHECK(axis.max_bytes == 512 * 4);
  CHECK(b.config().outputs[output_index(b.config(), "adc0.spectrum_axis_units")].key_type == WEIR_KEY_TEXT);
  for (const char* name : {"adc0.live_s", "adc0.dead_s"})
    CHECK(b.config().outputs[output_index(b.config(), name)].key_type == WEIR_KEY_F64);
  for (const char* name : {"adc0.counts", "adc0.pileups", "adc0.out_of_range"})
    CHECK(b.config().outputs[output_index(b.config(), name)].key_type == WEIR_KEY_U64);
  // Declared last: the calibration keys keep outputs 5 and 6.
  CHECK(output_index(b.config(), "adc0.spectrum_axis") == 5);
  CHECK(output_index(b.config(), "adc0.spectrum_axis_units") == 6);
  CHECK(output_index(b.config(), "adc0.out_of_range") == 7);
  CHECK(b.config().outputs[7].max_bytes == 8);
  // Then the accumulation's stamp, span (and its units) and partial flag.
  CHECK(output_index(b.config(), "adc0.spectrum.start_ns") == 8);
  CHECK(b.config().outputs[8].key_type == WEIR_KEY_U64);
  CHECK(b.config().outputs[output_index(b.config(), "adc0.spectrum.window_s")].key_type == WEIR_KEY_F64);
  CHECK(b.config().outputs[output_index(b.config(), "adc0.spectrum.window_s_units")].key_type == WEIR_KEY_TEXT);
  CHECK(b.config().outputs[output_index(b.config(), "adc0.spectrum.partial")].key_type == WEIR_KEY_U64);
  // The event channel: frames of 4 f64 fields along the axis "event", and its dropped counter.
  const auto& events = b.config().outputs[output_index(b.config(), "adc0.pulses")];
  CHECK(events.kind == WEIR_OUTPUT_CHANNEL);
  CHECK(events.dtype == WEIR_DTYPE_F64);
  CHECK(events.frame_elements == 4);
  CHECK(events.samples_per_block == 256 * 4);
  CHECK(std::string(events.axis.name) == "event");
  CHECK(std::string(events.units) == "V");
  CHECK(b.config().outputs[output_index(b.config(), "adc0.pulses_dropped")].key_type == WEIR_KEY_U64);
  api->stop(shard);
}

TEST_CASE("the mca shard publishes every pulse it counts as an event, a block per input block, at its trigger "
          "time, with the height the spectrum binned" *
          doctest::timeout(30)) {
  const weir_shard_api* api = weir_builtin_mca(WEIR_SHARD_ABI_VERSION);
  const std::uint32_t block = 4096;
  const double rate = 1e6;
  ShardConfig b("adc0", WEIR_DTYPE_F32, block, rate, "V",
                {{"rise", "10e-6"}, {"flat", "3e-6"}, {"tau", "50e-6"}, {"fast_rise", "1e-6"}, {"bins", "1024"},
                 {"range", "1.5"}, {"threshold", "0.05"}, {"publish", "0"}});
  auto [shard, error] = configure(*api, b.build());
  REQUIRE_MESSAGE(shard != nullptr, error);
  const auto index = [&b](const char* name) { return static_cast<std::uint32_t>(output_index(b.config(), name)); };
  FakeHost fake(b.config());
  const weir_shard_host host = fake.table();
  auto generator = pulses(rate, block, 11);
  REQUIRE(generator);
  std::vector<float> samples(block);
  const std::uint64_t blocks = 120;
  const std::uint64_t t0 = 1'700'000'000'000'000'000ULL;
  for (std::uint64_t n = 0; n < blocks; ++n) {
    generator->fill(std::span<float>(samples));
    const weir_shard_block in{samples.data(), block, 0, n, t0 + n * block * 1000, 0, n * block};  // 1 us a sample
    REQUIRE(api->process(shard, &in, &host) == 0);
  }
  std::uint64_t event_blocks = 0, accepted = 0, piled = 0, out = 0, last_ns = 0;
  std::vector<std::uint32_t> bins(1024);
  for (const FakeHost::Published& p : fake.published) {
    if (p.output != index("adc0.pulses")) continue;
    CHECK(p.realtime_ns == t0 + event_blocks * block * 1000);  // stamped with its input block
    ++event_blocks;
    const std::vector<double> fields = p.as_f64();
    REQUIRE(fields.size() % 4 == 0);
    for (std::size_t e = 0; e < fields.size(); e += 4) {
      const double offset = fields[e], height = fields[e + 1];
      const auto flags = static_cast<std::uint32_t>(fields[e + 3]);
      CHECK(offset == std::round(offset));  // whole ns: the trigger sample's time
      const auto at = static_cast<std::uint64_t>(static_cast<double>(p.realtime_ns) + offset);
      CHECK(at >= last_ns);
      last_ns = at;
      CHECK(fields[e + 2] == 0);
      if ((flags & weir::core::kEventFlagPileup) != 0) {
        ++piled;
        continue;
      }
      ++accepted;
      if ((flags & weir::core::kEventFlagOutOfRange) != 0) {
        ++out;
        continue;
      }
      ++bins[std::min<std::size_t>(1023, static_cast<std::size_t>(height * (1024 / 1.5)))];
    }
  }
  CHECK(event_blocks == blocks);
  CHECK(accepted == fake.u64(index("adc0.counts")));
  CHECK(piled == fake.u64(index("adc0.pileups")));
  CHECK(out == fake.u64(index("adc0.out_of_range")));
  CHECK(accepted > 200);
  CHECK(bins == spectrum_of(fake, index("adc0.spectrum")));
  CHECK(fake.misuse == 0);
  api->stop(shard);
}

TEST_CASE("bad mca parameters are refused naming the kind, the parameter, the value and the range") {
  const weir_shard_api* api = weir_builtin_mca(WEIR_SHARD_ABI_VERSION);
  const auto refused = [api](std::vector<std::pair<std::string, std::string>> params, double rate,
                             std::vector<std::string> words) {
    ShardConfig b("adc0", WEIR_DTYPE_F32, 1024, rate, "V", std::move(params));
    auto [shard, error] = configure(*api, b.build());
    CHECK(shard == nullptr);
    for (const auto& w : words) CHECK_MESSAGE(error.find(w) != std::string::npos, error, " lacks ", w);
  };
  refused({{"bins", "8"}}, 1e6, {"mca", "bins", "8", "allowed 16 to 65536"});
  refused({{"bins", "100000"}}, 1e6, {"mca", "bins", "100000", "allowed 16 to 65536"});
  refused({{"threshold", "0"}}, 1e6, {"mca", "threshold", "0", "> 0"});
  refused({{"range", "-1"}}, 1e6, {"mca", "range", "-1", "allowed 0 to"});
  refused({{"rise", "0.5"}}, 1e8, {"mca", "rise", "0.5 s", "50000000 samples", "1048576"});
  refused({{"fast_rise", "5e-6"}, {"rise", "2e-6"}}, 1e6, {"mca", "fast_rise", "5e-06 s", "rise of 2e-06 s"});
  refused({{"pileup", "sometimes"}}, 1e6, {"mca", "pileup", "sometimes", "true or false"});
}

TEST_CASE("the mca shard analyses simulator pulses and publishes a consistent spectrum" * doctest::timeout(30)) {
  const weir_shard_api* api = weir_builtin_mca(WEIR_SHARD_ABI_VERSION);
  const std::uint32_t block = 4096;
  const double rate = 1e6;
  ShardConfig b("adc0", WEIR_DTYPE_F32, block, rate, "V",
                  {{"rise", "10e-6"}, {"flat", "3e-6"}, {"tau", "50e-6"}, {"fast_rise", "1e-6"}, {"bins", "1024"},
                   {"range", "1.5"}, {"threshold", "0.05"}, {"publish", "0.2"}});
  auto [shard, error] = configure(*api, b.build());
  REQUIRE_MESSAGE(shard != nullptr, error);
  const auto index = [&b](const char* name) { return static_cast<std::uint32_t>(output_index(b.config(), name)); };
  FakeHost fake(b.config());
  const weir_shard_host host = fake.table();

  auto generator = pulses(rate, block, 5);
  REQUIRE(generator);
  std::vector<float> samples(block);
  const std::uint64_t blocks = 245;  // ~1 s
  for (std::uint64_t n = 0; n < blocks; ++n) {
    generator->fill(std::span<float>(samples));
    const weir_shard_block in{samples.data(), block, 0, n, 0, 0, n * block};
    REQUIRE(api->process(shard, &in, &host) == 0);
  }
  // Written on the first block, then every 0.2 s of stream time (every 49th block).
  CHECK(fake.key_writes[index("adc0.spectrum")].size() == 1 + (blocks - 1) / 49);
  const std::vector<std::uint32_t> bins = spectrum_of(fake, index("adc0.spectrum"));
  REQUIRE(bins.size() == 1024);
  const std::uint64_t in_spectrum = std::accumulate(bins.begin(), bins.end(), std::uint64_t{0});
  const std::uint64_t accepted = fake.u64(index("adc0.counts"));
  CHECK(in_spectrum > 500);
  CHECK(in_spectrum <= accepted);
  CHECK(in_spectrum >= accepted * 95 / 100);  // nearly all heights are inside the range
  const double live = fake.f64(index("adc0.live_s")), dead = fake.f64(index("adc0.dead_s"));
  const double real = static_cast<double>((blocks - 1) / 49 * 49 + 1) * block / rate;  // at the last write
  CHECK(live + dead == doctest::Approx(real).epsilon(1e-12));
  CHECK(dead > 0);
  CHECK(fake.u64(index("adc0.pileups")) > 0);
  CHECK(accepted + fake.u64(index("adc0.pileups")) <= generator->pulse_count());
  CHECK(fake.misuse == 0);
  api->stop(shard);
}

TEST_CASE("the mca spectrum is a u32 array whose counts sum to the pulses found, with its calibration" *
          doctest::timeout(30)) {
  const weir_shard_api* api = weir_builtin_mca(WEIR_SHARD_ABI_VERSION);
  const std::uint32_t block = 4096, bins = 256;
  const double rate = 1e6, range = 30.0, gain = 662.0 / 0.662 / 1.037;  // volts to keV, as a pulser run would
  // A range far above every line (and every pile-up sum) bins every accepted pulse.
  ShardConfig b("adc0", WEIR_DTYPE_F32, block, rate, "V",
                {{"rise", "10e-6"}, {"flat", "3e-6"}, {"tau", "50e-6"}, {"fast_rise", "1e-6"},
                 {"bins", std::to_string(bins)}, {"range", std::to_string(range * 1000)},
                 {"gain", std::to_string(gain)}, {"units", "keV"}, {"publish", "0"}});
  auto [shard, error] = configure(*api, b.build());
  REQUIRE_MESSAGE(shard != nullptr, error);
  const auto index = [&b](const char* name) { return static_cast<std::uint32_t>(output_index(b.config(), name)); };
  FakeHost fake(b.config());
  const weir_shard_host host = fake.table();
  const weir_shard_output spectrum = fake.output(index("adc0.spectrum"));
  CHECK(spectrum.key_type == WEIR_KEY_ARRAY);
  CHECK(spectrum.array_dtype == WEIR_DTYPE_U32);
  CHECK(spectrum.array_rank == 1);
  CHECK(spectrum.array_dims[0] == bins);

  auto generator = pulses(rate, block, 11);
  REQUIRE(generator);
  std::vector<float> samples(block);
  for (std::uint64_t n = 0; n < 100; ++n) {
    generator->fill(std::span<float>(samples));
    const weir_shard_block in{samples.data(), block, 0, n, 0, 0, n * block};
    REQUIRE(api->process(shard, &in, &host) == 0);
  }
  const std::vector<std::uint32_t> counts = fake.array<std::uint32_t>(index("adc0.spectrum"));
  REQUIRE(counts.size() == bins);
  CHECK(counts == spectrum_of(fake, index("adc0.spectrum")));  // the same little-endian words as before
  const std::uint64_t found = fake.u64(index("adc0.counts"));
  CHECK(found > 100);
  CHECK(std::accumulate(counts.begin(), counts.end(), std::uint64_t{0}) == found);
  CHECK(fake.u64(index("adc0.out_of_range")) == 0);
  CHECK(fake.writes(index("adc0.out_of_range")).size() == fake.writes(index("adc0.counts")).size());
  for (const std::string& write : fake.writes(index("adc0.spectrum"))) CHECK(write.size() == bins * 4);

  // The calibration: bin centres after gain, written once, in the units given.
  CHECK(fake.writes(index("adc0.spectrum_axis")).size() == 1);
  const std::vector<float> axis = fake.array<float>(index("adc0.spectrum_axis"));
  REQUIRE(axis.size() == bins);
  const double width = range * 1000 / bins;
  for (std::uint32_t i = 0; i < bins; ++i) CHECK(axis[i] == doctest::Approx((i + 0.5) * width).epsilon(1e-6));
  CHECK(fake.last_key(index("adc0.spectrum_axis_units")) == "keV");
  CHECK(fake.misuse == 0);
  api->stop(shard);
}

TEST_CASE("the mca publishes the pulses out of the binned range, so that the spectrum adds up to the counts" *
          doctest::timeout(30)) {
  const weir_shard_api* api = weir_builtin_mca(WEIR_SHARD_ABI_VERSION);
  const std::uint32_t block = 4096;
  const double rate = 1e6;
  // A range of 1.0 cuts off the simulator's 1.173 and 1.332 lines (times the trapezoid's 1.037).
  ShardConfig b("adc0", WEIR_DTYPE_F32, block, rate, "V",
                {{"rise", "10e-6"}, {"flat", "3e-6"}, {"tau", "50e-6"}, {"fast_rise", "1e-6"}, {"bins", "256"},
                 {"range", "1.0"}, {"publish", "0.05"}});
  auto [shard, error] = configure(*api, b.build());
  REQUIRE_MESSAGE(shard != nullptr, error);
  const auto index = [&b](const char* name) { return static_cast<std::uint32_t>(output_index(b.config(), name)); };
  FakeHost fake(b.config());
  const weir_shard_host host = fake.table();

  auto generator = pulses(rate, block, 3);
  REQUIRE(generator);
  std::vector<float> samples(block);
  for (std::uint64_t n = 0; n < 100; ++n) {
    generator->fill(std::span<float>(samples));
    const weir_shard_block in{samples.data(), block, 0, n, 0, 0, n * block};
    REQUIRE(api->process(shard, &in, &host) == 0);
  }
  // Every publish: the spectrum, counts and out_of_range written together, from one state.
  const std::vector<std::string> spectra = fake.writes(index("adc0.spectrum"));
  const std::vector<std::string> counts = fake.writes(index("adc0.counts"));
  const std::vector<std::string> outside = fake.writes(index("adc0.out_of_range"));
  REQUIRE(spectra.size() > 2);
  REQUIRE(counts.size() == spectra.size());
  REQUIRE(outside.size() == spectra.size());
  const auto u64 = [](const std::string& bytes) {
    REQUIRE(bytes.size() == 8);
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < 8; ++i) v |= std::uint64_t{static_cast<unsigned char>(bytes[i])} << (8 * i);
    return v;
  };
  for (std::size_t w = 0; w < spectra.size(); ++w) {
    REQUIRE(spectra[w].size() == 256 * 4);
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < 4 * 256; ++i)  // little-endian u32 words: byte i weighs 256^(i % 4)
      sum += std::uint64_t{static_cast<unsigned char>(spectra[w][i])} << (8 * (i % 4));
    CHECK_MESSAGE(sum + u64(outside[w]) == u64(counts[w]), "publish ", w);
  }
  const std::uint64_t out_of_range = fake.u64(index("adc0.out_of_range"));
  const std::uint64_t accepted = fake.u64(index("adc0.counts"));
  CHECK(out_of_range > 0);
  CHECK(out_of_range < accepted);
  // Apart: below 0 (underflow) and at or above the range (overflow), written with every publish.
  const std::uint64_t underflow = fake.u64(index("adc0.underflow"));
  const std::uint64_t overflow = fake.u64(index("adc0.overflow"));
  CHECK(underflow + overflow == out_of_range);
  CHECK(overflow > 0);  // the 1.173 and 1.332 lines
  CHECK(fake.writes(index("adc0.underflow")).size() == spectra.size());
  CHECK(fake.writes(index("adc0.overflow")).size() == spectra.size());
  const std::size_t outputs = b.config().output_count;
  CHECK(output_index(b.config(), "adc0.underflow") == outputs - 2);  // declared last: the others keep theirs
  CHECK(output_index(b.config(), "adc0.overflow") == outputs - 1);
  const std::vector<std::uint32_t> bins = fake.array<std::uint32_t>(index("adc0.spectrum"));
  CHECK(std::accumulate(bins.begin(), bins.end(), std::uint64_t{0}) + out_of_range == accepted);
  CHECK(fake.misuse == 0);
  api->stop(shard);
}

TEST_CASE("the mca calibration takes the input's units when none are given, and refuses long ones") {
  const weir_shard_api* api = weir_builtin_mca(WEIR_SHARD_ABI_VERSION);
  ShardConfig b("adc0", WEIR_DTYPE_F32, 1024, 1e6, "mV", {{"bins", "16"}, {"range", "1.6"}});
  auto [shard, error] = configure(*api, b.build());
  REQUIRE_MESSAGE(shard != nullptr, error);
  FakeHost fake(b.config());
  const weir_shard_host host = fake.table();
  std::vector<float> zeros(1024, 0.0F);
  const weir_shard_block in{zeros.data(), 1024, 0, 0, 0, 0, 0};
  REQUIRE(api->process(shard, &in, &host) == 0);
  const auto axis_key = static_cast<std::uint32_t>(output_index(b.config(), "adc0.spectrum_axis"));
  const std::vector<float> axis = fake.array<float>(axis_key);
  REQUIRE(axis.size() == 16);
  CHECK(axis[0] == doctest::Approx(0.05));
  CHECK(axis[15] == doctest::Approx(1.55));
  CHECK(fake.last_key(static_cast<std::uint32_t>(output_index(b.config(), "adc0.spectrum_axis_units"))) == "mV");
  CHECK(fake.misuse == 0);
  api->stop(shard);

  ShardConfig longer("adc0", WEIR_DTYPE_F32, 1024, 1e6, "V", {{"units", std::string(40, 'u')}});
  auto refused = configure(*api, longer.build());
  CHECK(refused.shard == nullptr);
  CHECK(refused.error.find("units") != std::string::npos);
  CHECK(refused.error.find("at most 31 bytes") != std::string::npos);
}


TEST_CASE("the mca energy calibration makes the axis keV at each bin centre, and refuses what cannot be one") {
  const weir_shard_api* api = weir_builtin_mca(WEIR_SHARD_ABI_VERSION);
  for (const auto& [text, a0, a1, a2] : {std::tuple{"2.5,1000,-40", 2.5, 1000.0, -40.0}, std::tuple{"-1, 800", -1.0, 800.0, 0.0}}) {
    ShardConfig b("adc0", WEIR_DTYPE_F32, 1024, 1e6, "V", {{"bins", "16"}, {"range", "1.6"}, {"energy", text}});
    auto [shard, error] = configure(*api, b.build());
    REQUIRE_MESSAGE(shard != nullptr, error);
    FakeHost fake(b.config());
    const weir_shard_host host = fake.table();
    std::vector<float> zeros(1024, 0.0F);
    const weir_shard_block in{zeros.data(), 1024, 0, 0, 0, 0, 0};
    REQUIRE(api->process(shard, &in, &host) == 0);
    const std::vector<float> axis = fake.array<float>(static_cast<std::uint32_t>(output_index(b.config(), "adc0.spectrum_axis")));
    REQUIRE(axis.size() == 16);
    for (std::uint32_t i = 0; i < 16; ++i) {
      const double h = (i + 0.5) * 0.1;
      CHECK(axis[i] == doctest::Approx(a0 + a1 * h + a2 * h * h).epsilon(1e-6));
    }
    CHECK(fake.last_key(static_cast<std::uint32_t>(output_index(b.config(), "adc0.spectrum_axis_units"))) == "keV");
    CHECK(fake.misuse == 0);
    api->stop(shard);
  }
  const auto refused = [api](std::vector<std::pair<std::string, std::string>> params, std::vector<std::string> words) {
    ShardConfig b("adc0", WEIR_DTYPE_F32, 1024, 1e6, "V", std::move(params));
    auto [shard, error] = configure(*api, b.build());
    CHECK(shard == nullptr);
    for (const auto& w : words) CHECK_MESSAGE(error.find(w) != std::string::npos, error, " lacks ", w);
  };
  refused({{"energy", "1000"}}, {"mca", "energy", "'1000'", "two or three finite numbers"});
  refused({{"energy", "0,1,2,3"}}, {"energy", "two or three"});
  refused({{"energy", "0,abc"}}, {"energy", "'0,abc'"});
  refused({{"energy", "0,nan"}}, {"energy", "'0,nan'"});
  refused({{"energy", "0,-5"}}, {"energy", "must rise", "a1 > 0"});
  refused({{"energy", "0,100,-50"}, {"range", "1.5"}}, {"energy", "must rise over the heights 0 to range (1.5)"});
  refused({{"energy", "0,1000"}, {"units", "V"}}, {"units", "'V'", "keV"});
}

}  // TEST_SUITE

TEST_SUITE("dsp.events.mca_shard.stamps") {

TEST_CASE("an input gap closes the mca's accumulation as partial and a new one starts, stamped, after it" *
          doctest::timeout(30)) {
  const weir_shard_api* api = weir_builtin_mca(WEIR_SHARD_ABI_VERSION);
  REQUIRE((api->flush != nullptr));
  const std::uint32_t block = 4096;
  const double rate = 1e6;
  ShardConfig b("adc0", WEIR_DTYPE_F32, block, rate, "V",
                {{"rise", "10e-6"}, {"flat", "3e-6"}, {"tau", "50e-6"}, {"fast_rise", "1e-6"}, {"bins", "1024"},
                 {"range", "1.5"}, {"threshold", "0.05"}, {"publish", "0.2"}});
  auto [shard, error] = configure(*api, b.build());
  REQUIRE_MESSAGE(shard != nullptr, error);
  const auto index = [&b](const char* name) { return static_cast<std::uint32_t>(output_index(b.config(), name)); };
  FakeHost fake(b.config());
  const weir_shard_host host = fake.table();
  const auto stamp = [](std::uint64_t n) { return 7'000'000'000ULL + n * 4'096'000 + n % 7; };
  const auto feed = [&](std::span<const float> x, std::uint64_t n, std::uint64_t t, std::uint32_t flags) {
    const weir_shard_block in{x.data(), block, flags, n, t, t, n * block};
    REQUIRE(api->process(shard, &in, &host) == 0);
  };
  const auto spectrum_sum = [&] {
    const auto bins = spectrum_of(fake, index("adc0.spectrum"));
    return std::accumulate(bins.begin(), bins.end(), std::uint64_t{0});
  };

  // Before the gap: detector pulses.
  auto generator = pulses(rate, block, 11);
  REQUIRE(generator);
  std::vector<float> samples(block);
  for (std::uint64_t n = 0; n < 60; ++n) {
    generator->fill(std::span<float>(samples));
    feed(samples, n, stamp(n), 0);
  }
  CHECK(fake.u64(index("adc0.spectrum.partial")) == 0);
  // Then 3 blocks lost (the writer's gap: the sample index continues) and a quiet input: the block
  // after the gap first closes the accumulation, all of it from before the gap.
  const std::vector<float> quiet(block, 0.0F);
  feed(quiet, 60, stamp(63), WEIR_SHARD_AFTER_GAP);
  CHECK(fake.u64(index("adc0.spectrum.partial")) == 1);
  const std::uint64_t before = fake.u64(index("adc0.counts"));
  CHECK(before > 100);
  CHECK(spectrum_sum() + fake.u64(index("adc0.out_of_range")) == before);
  CHECK(fake.u64(index("adc0.spectrum.start_ns")) == stamp(0));
  CHECK(fake.f64(index("adc0.spectrum.window_s")) == doctest::Approx(60.0 * block / rate));
  // After it: a fresh accumulation, published a full interval later, with no pulse from before.
  for (std::uint64_t n = 61; n < 120; ++n) feed(quiet, n, stamp(n + 3), 0);
  CHECK(fake.u64(index("adc0.spectrum.partial")) == 0);
  CHECK(fake.u64(index("adc0.counts")) == 0);
  CHECK(spectrum_sum() == 0);
  CHECK(fake.u64(index("adc0.spectrum.start_ns")) == stamp(63));
  // At stop: the whole accumulation since the gap, closed as partial.
  REQUIRE(api->flush(shard, &host) == 0);
  CHECK(fake.u64(index("adc0.spectrum.partial")) == 1);
  CHECK(fake.f64(index("adc0.spectrum.window_s")) == doctest::Approx(60.0 * block / rate));
  CHECK(fake.u64(index("adc0.spectrum.start_ns")) == stamp(63));
  CHECK(fake.last_key(index("adc0.spectrum.window_s_units")) == "s");
  CHECK(fake.misuse == 0);
  api->stop(shard);
}

}  // TEST_SUITE

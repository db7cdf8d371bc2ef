#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numbers>
#include <string>
#include <vector>

#include "dsp_test_support.hpp"
#include "weir/dsp/spectral_shards.hpp"
#include "weir/shard_fake_host.hpp"

using weir::shard_test::ShardConfig;

namespace {

constexpr double kRate = 51200;  // with N = 512: 100 Hz bins

const weir_shard_api& fft_api() {
  const weir_shard_api* api = weir_builtin_fft(WEIR_SHARD_ABI_VERSION);
  REQUIRE(api != nullptr);
  return *api;
}

// The params every test here passes: measured planning and the user's cache would slow tests
// and write into $HOME.
ShardConfig fft_config(weir_dtype dtype = WEIR_DTYPE_F32, std::uint32_t block = 1000) {
  ShardConfig b("adc0", dtype, block, kRate, "V");
  b.param("wisdom", "off").param("plan", "estimate");
  return b;
}

std::string refusal(ShardConfig& b) {
  const auto result = weir::shard_test::configure(fft_api(), b.build());
  CHECK(result.shard == nullptr);
  return result.error;
}

}  // namespace

TEST_SUITE("dsp.fft_shard") {

TEST_CASE("the fft table declares its parameters with defaults, ranges and help") {
  const weir_shard_api& api = fft_api();
  CHECK(std::string(api.name) == "fft");
  CHECK(api.abi_version == WEIR_SHARD_ABI_VERSION);
  CHECK(api.struct_size == sizeof(weir_shard_api));
  CHECK(std::string(api.description).find("k*fs/N") != std::string::npos);
  CHECK((api.input_dtypes & (1U << WEIR_DTYPE_I16)) != 0);
  CHECK((api.input_dtypes & (1U << WEIR_DTYPE_F64)) != 0);
  CHECK((api.input_dtypes & (1U << WEIR_DTYPE_C64)) == 0);
  std::vector<std::string> names;
  for (std::uint32_t i = 0; i < api.param_count; ++i) {
    const weir_shard_param& p = api.params[i];
    CAPTURE(p.name);
    names.emplace_back(p.name);
    CHECK(p.help != nullptr);
    CHECK(p.default_value != nullptr);
    if (p.type == WEIR_PARAM_INT || p.type == WEIR_PARAM_REAL) CHECK(p.min < p.max);
  }
  for (const char* expected : {"size", "window", "overlap", "average", "averages", "alpha", "spectrum", "db", "wisdom"})
    CHECK(std::find(names.begin(), names.end(), expected) != names.end());
  CHECK(weir_builtin_fft(WEIR_SHARD_ABI_VERSION + 1) == nullptr);
}

TEST_CASE("configure declares one f32 spectrum channel named, sized and scaled from the input") {
  SUBCASE("psd by default: <input>.psd, V^2/Hz") {
    auto b = fft_config();
    b.param("size", "512").param("overlap", "0");
    auto& cfg = b.build();
    const auto result = weir::shard_test::configure(fft_api(), cfg);
    REQUIRE_MESSAGE(result.shard != nullptr, result.error);
    REQUIRE(cfg.output_count == 4);  // the spectra, then the window's length, its units, dropped samples
    CHECK(std::string(cfg.outputs[1].name) == "adc0.psd.window_s");
    CHECK(cfg.outputs[1].key_type == WEIR_KEY_F64);
    CHECK(std::string(cfg.outputs[2].name) == "adc0.psd.window_s_units");
    CHECK(cfg.outputs[2].key_type == WEIR_KEY_TEXT);
    CHECK(std::string(cfg.outputs[3].name) == "adc0.psd.dropped_samples");
    CHECK(cfg.outputs[3].key_type == WEIR_KEY_U64);
    const weir_shard_output& out = cfg.outputs[0];
    CHECK(std::string(out.name) == "adc0.psd");
    CHECK(out.kind == WEIR_OUTPUT_CHANNEL);
    CHECK(out.dtype == WEIR_DTYPE_F32);
    CHECK(out.samples_per_block == 257);
    CHECK(std::string(out.units) == "V^2/Hz");
    CHECK(out.rate_hz == doctest::Approx(257 * kRate / 512));  // bins x spectra per second
    CHECK(out.frame_elements == 257);  // one spectrum of N/2+1 bins per block
    CHECK(std::string(out.axis.name) == "frequency");
    CHECK(std::string(out.axis.units) == "Hz");
    CHECK(out.axis.start == 0.0);
    CHECK(out.axis.step == doctest::Approx(kRate / 512));  // 100 Hz bins
    fft_api().stop(result.shard);
  }
  SUBCASE("amplitude in dB, 50 % overlap and linear averaging over 4") {
    auto b = fft_config();
    b.param("size", "1024").param("spectrum", "amplitude").param("db", "true");
    b.param("overlap", "0.5").param("average", "linear").param("averages", "4");
    auto& cfg = b.build();
    const auto result = weir::shard_test::configure(fft_api(), cfg);
    REQUIRE_MESSAGE(result.shard != nullptr, result.error);
    CHECK(std::string(cfg.outputs[0].name) == "adc0.amplitude");
    CHECK(std::string(cfg.outputs[0].units) == "dBV");
    CHECK(cfg.outputs[0].rate_hz == doctest::Approx(513 * kRate / 512 / 4));
    fft_api().stop(result.shard);
  }
  SUBCASE("an output base other than the input's name is used as it is") {
    auto b = fft_config();
    b.param("spectrum", "power").output_base("lab.spectrum");
    auto& cfg = b.build();
    const auto result = weir::shard_test::configure(fft_api(), cfg);
    REQUIRE_MESSAGE(result.shard != nullptr, result.error);
    CHECK(std::string(cfg.outputs[0].name) == "lab.spectrum");
    CHECK(std::string(cfg.outputs[0].units) == "V^2");
    CHECK(cfg.outputs[0].samples_per_block == 513);  // size 1024 by default
    CHECK(cfg.outputs[0].frame_elements == 513);
    CHECK(cfg.outputs[0].axis.step == doctest::Approx(kRate / 1024));
    fft_api().stop(result.shard);
  }
}

TEST_CASE("configure refuses bad parameters naming the kind, the parameter, the value and the range") {
  SUBCASE("an odd size") {
    auto b = fft_config();
    b.param("size", "1001");
    const std::string e = refusal(b);
    CHECK(e.find("fft") == 0);
    CHECK(e.find("size") != std::string::npos);
    CHECK(e.find("1001") != std::string::npos);
    CHECK(e.find("even") != std::string::npos);
    CHECK(e.find("1048576") != std::string::npos);
  }
  SUBCASE("a size with a prime factor FFTW would allocate for") {
    auto b = fft_config();
    b.param("size", "2062");
    const std::string e = refusal(b);
    CHECK(e.find("size = '2062'") != std::string::npos);
    CHECK(e.find("prime factor 1031") != std::string::npos);
    CHECK(e.find("e.g. 2080") != std::string::npos);
  }
  SUBCASE("a size out of range") {
    auto b = fft_config();
    b.param("size", "8");
    const std::string e = refusal(b);
    CHECK(e.find("size = '8'") != std::string::npos);
    CHECK(e.find("16 .. 1048576") != std::string::npos);
  }
  SUBCASE("overlap above 0.95") {
    auto b = fft_config();
    b.param("overlap", "0.99");
    const std::string e = refusal(b);
    CHECK(e.find("overlap = '0.99'") != std::string::npos);
    CHECK(e.find("0.95") != std::string::npos);
  }
  SUBCASE("exponential averaging with alpha 0") {
    auto b = fft_config();
    b.param("average", "exponential").param("alpha", "0");
    const std::string e = refusal(b);
    CHECK(e.find("alpha") != std::string::npos);
    CHECK(e.find("(0, 1]") != std::string::npos);
  }
  SUBCASE("an unknown window") {
    auto b = fft_config();
    b.param("window", "triangle");
    const std::string e = refusal(b);
    CHECK(e.find("'triangle'") != std::string::npos);
    CHECK(e.find("blackman-harris") != std::string::npos);
  }
  SUBCASE("complex input") {
    auto b = fft_config(WEIR_DTYPE_C64);
    const std::string e = refusal(b);
    CHECK(e.find("adc0") != std::string::npos);
    CHECK(e.find("c64") != std::string::npos);
  }
  SUBCASE("a size that is not a number") {
    auto b = fft_config();
    b.param("size", "1k");
    CHECK(refusal(b).find("not an integer") != std::string::npos);
  }
}

TEST_CASE("a sine's peak sits on the frequency axis the fft declares") {
  for (const char* size : {"512", "1000", "4096"}) {
    CAPTURE(size);
    auto b = fft_config(WEIR_DTYPE_F32, 4096);
    b.param("size", size).param("overlap", "0").param("spectrum", "amplitude").param("window", "flattop");
    auto& cfg = b.build();
    const auto configured = weir::shard_test::configure(fft_api(), cfg);
    REQUIRE_MESSAGE(configured.shard != nullptr, configured.error);
    weir::shard_test::FakeHost host(cfg);
    const weir_shard_output out = host.output(0);
    const std::uint32_t n = static_cast<std::uint32_t>(std::stoul(size));
    REQUIRE(out.frame_elements == n / 2 + 1);
    CHECK(out.samples_per_block == out.frame_elements);
    CHECK(out.axis.step == kRate / n);  // rate / N exactly as computed

    const double tone_hz = 3000;  // 30 bins of 100 Hz at N = 512
    std::vector<float> samples(4096);
    for (std::size_t i = 0; i < samples.size(); ++i)
      samples[i] = static_cast<float>(std::sin(2 * std::numbers::pi * tone_hz * static_cast<double>(i) / kRate));
    const weir_shard_host table = host.table();
    const weir_shard_block in{samples.data(), 4096, 0, 0, 0, 0, 0};
    REQUIRE(fft_api().process(configured.shard, &in, &table) == 0);
    fft_api().stop(configured.shard);
    REQUIRE_FALSE(host.published.empty());
    const auto& s = host.published[0].samples;
    REQUIRE(s.size() == out.frame_elements);
    const auto peak = static_cast<std::size_t>(std::max_element(s.begin(), s.end()) - s.begin());
    CHECK(std::abs(out.axis.start + static_cast<double>(peak) * out.axis.step - tone_hz) <= out.axis.step / 2);
    CHECK(host.misuse == 0);
  }
}

TEST_CASE("process turns i16 blocks of a sine into amplitude spectra with the right peak") {
  const std::uint32_t block = 300;
  auto b = fft_config(WEIR_DTYPE_I16, block);
  b.param("size", "512").param("overlap", "0").param("spectrum", "amplitude").param("window", "flattop");
  auto& cfg = b.build();
  const auto configured = weir::shard_test::configure(fft_api(), cfg);
  REQUIRE_MESSAGE(configured.shard != nullptr, configured.error);

  // 1000 ADC codes of amplitude at 6400 Hz (bin 64), made by the simulator as a driver would.
  weir::acq::SignalConfig signal;
  signal.kind = weir::acq::SignalKind::sine;
  signal.sample_rate_hz = kRate;
  signal.frequency_hz = 6400;
  signal.amplitude = 1000;
  auto generator = weir::acq::SignalGenerator::create(signal, block);
  REQUIRE(generator);
  weir::shard_test::FakeHost host(cfg);
  const weir_shard_host table = host.table();
  std::vector<std::byte> bytes(block * sizeof(std::int16_t));
  const int blocks = 12;  // 3600 samples: 7 frames of 512
  for (int i = 0; i < blocks; ++i) {
    (void)generator->fill(weir::core::Dtype::i16, bytes, block, 32768.0);  // full scale 32768: code == value
    weir_shard_block in{};
    in.samples = bytes.data();
    in.count = block;
    in.sequence = static_cast<std::uint64_t>(i);
    in.realtime_ns = 1'000'000'000 + static_cast<std::uint64_t>(i) * 7'000'000;  // irregular: not 300 / fs
    in.first_sample = static_cast<std::uint64_t>(i) * block;
    CHECK(fft_api().process(configured.shard, &in, &table) == 0);
  }
  fft_api().stop(configured.shard);

  REQUIRE(host.published.size() == 7);
  CHECK(host.double_claims == 0);
  CHECK(host.misuse == 0);
  for (std::size_t j = 0; j < host.published.size(); ++j) {
    CAPTURE(j);
    const auto& s = host.published[j].samples;
    REQUIRE(s.size() == 257);
    const auto peak = static_cast<std::size_t>(std::max_element(s.begin(), s.end()) - s.begin());
    CHECK(peak == 64);
    CHECK(s[64] == doctest::Approx(1000).epsilon(1e-3));
    // Stamped with frame j's first sample: its block's time + its place in the block / fs.
    const std::uint64_t first = j * 512;
    const std::uint64_t stamp = 1'000'000'000 + first / block * 7'000'000 +
                                static_cast<std::uint64_t>(std::llround(static_cast<double>(first % block) * 1e9 / kRate));
    CHECK(host.published[j].realtime_ns == stamp);
    CHECK(host.published[j].flags == 0);
  }
}

TEST_CASE("a spectrum dropped at the source is skipped and the next one is published") {
  auto b = fft_config(WEIR_DTYPE_F64, 256);
  b.param("size", "256").param("overlap", "0").param("spectrum", "power");
  auto& cfg = b.build();
  const auto configured = weir::shard_test::configure(fft_api(), cfg);
  REQUIRE_MESSAGE(configured.shard != nullptr, configured.error);
  weir::shard_test::FakeHost host(cfg);
  const weir_shard_host table = host.table();
  std::vector<double> x(256, 0.5);  // DC 0.5: power 0.25 in bin 0
  weir_shard_block in{};
  in.samples = x.data();
  in.count = 256;
  host.drop_claims = 1;
  CHECK(fft_api().process(configured.shard, &in, &table) == 0);
  CHECK(host.published.empty());
  CHECK(fft_api().process(configured.shard, &in, &table) == 0);
  REQUIRE(host.published.size() == 1);
  CHECK(host.published[0].samples[0] == doctest::Approx(0.25).epsilon(1e-5));
  CHECK(host.claims == 2);
  CHECK(host.misuse == 0);
  fft_api().stop(configured.shard);
}

}  // TEST_SUITE

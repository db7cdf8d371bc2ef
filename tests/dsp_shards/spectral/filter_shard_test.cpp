#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "dsp_test_support.hpp"
#include "weir/dsp/spectral_shards.hpp"
#include "weir/shard_fake_host.hpp"

using weir::shard_test::ShardConfig;

namespace {

constexpr double kRate = 48000;
constexpr std::uint32_t kBlock = 1200;

const weir_shard_api& filter_api() {
  const weir_shard_api* api = weir_builtin_filter(WEIR_SHARD_ABI_VERSION);
  REQUIRE(api != nullptr);
  return *api;
}

std::string refusal(ShardConfig& b) {
  const auto result = weir::shard_test::configure(filter_api(), b.build());
  CHECK(result.shard == nullptr);
  return result.error;
}

// Runs `x` (f64 samples) through a configured filter shard in blocks of kBlock; returns what it
// published, concatenated, and checks every block's size.
std::vector<float> run(ShardConfig& b, const std::vector<double>& x, weir::shard_test::FakeHost* seen = nullptr) {
  auto& cfg = b.build();
  const auto configured = weir::shard_test::configure(filter_api(), cfg);
  REQUIRE_MESSAGE(configured.shard != nullptr, configured.error);
  weir::shard_test::FakeHost local(cfg);
  weir::shard_test::FakeHost& host = seen != nullptr ? *seen : local;
  host.capacity = cfg.outputs[0].samples_per_block;  // a host made before configure
  const weir_shard_host table = host.table();
  for (std::size_t at = 0; at + kBlock <= x.size(); at += kBlock) {
    weir_shard_block in{};
    in.samples = x.data() + at;
    in.count = kBlock;
    in.realtime_ns = at;
    CHECK(filter_api().process(configured.shard, &in, &table) == 0);
  }
  filter_api().stop(configured.shard);
  CHECK(host.double_claims == 0);
  CHECK(host.misuse == 0);
  std::vector<float> y;
  for (const auto& block : host.published) {
    CHECK(block.samples.size() == cfg.outputs[0].samples_per_block);
    y.insert(y.end(), block.samples.begin(), block.samples.end());
  }
  return y;
}

std::vector<double> tones(std::initializer_list<double> frequencies, std::size_t n, double offset = 0) {
  std::vector<double> x(n, offset);
  for (const double f : frequencies) {
    const auto s = weir::test::sine(kRate, f, 1.0, n);
    for (std::size_t i = 0; i < n; ++i) x[i] += s[i];
  }
  return x;
}

}  // namespace

TEST_SUITE("dsp.filter_shard") {

TEST_CASE("the filter table declares its parameters and accepts real dtypes only") {
  const weir_shard_api& api = filter_api();
  CHECK(std::string(api.name) == "filter");
  CHECK((api.input_dtypes & (1U << WEIR_DTYPE_U8)) != 0);
  CHECK((api.input_dtypes & (1U << WEIR_DTYPE_C64)) == 0);
  std::vector<std::string> names;
  for (std::uint32_t i = 0; i < api.param_count; ++i) {
    CHECK(api.params[i].help != nullptr);
    names.emplace_back(api.params[i].name);
  }
  for (const char* expected : {"type", "cutoff", "cutoff_high", "taps", "q", "decimate", "window"})
    CHECK(std::find(names.begin(), names.end(), expected) != names.end());
  CHECK(weir_builtin_filter(0) == nullptr);
}

TEST_CASE("configure declares <input>.filt at the decimated rate and block size") {
  ShardConfig b("adc0", WEIR_DTYPE_I16, kBlock, kRate, "V");
  b.param("type", "lowpass").param("cutoff", "2000").param("decimate", "4");
  auto& cfg = b.build();
  const auto result = weir::shard_test::configure(filter_api(), cfg);
  REQUIRE_MESSAGE(result.shard != nullptr, result.error);
  REQUIRE(cfg.output_count == 1);
  CHECK(std::string(cfg.outputs[0].name) == "adc0.filt");
  CHECK(cfg.outputs[0].dtype == WEIR_DTYPE_F32);
  CHECK(cfg.outputs[0].rate_hz == 12000);
  CHECK(cfg.outputs[0].samples_per_block == kBlock / 4);
  CHECK(std::string(cfg.outputs[0].units) == "V");
  filter_api().stop(result.shard);
}

TEST_CASE("configure refuses bad parameters naming the kind, the parameter, the value and the range") {
  SUBCASE("a cutoff at Nyquist") {
    ShardConfig b("adc0", WEIR_DTYPE_F32, kBlock, kRate, "V");
    b.param("cutoff", "24000");
    const std::string e = refusal(b);
    CHECK(e.find("filter: parameter cutoff = '24000'") == 0);
    CHECK(e.find("(0, 24000)") != std::string::npos);
    CHECK(e.find("Nyquist") != std::string::npos);
  }
  SUBCASE("a band whose low edge is not below its high edge") {
    ShardConfig b("adc0", WEIR_DTYPE_F32, kBlock, kRate, "V");
    b.param("type", "bandpass").param("cutoff", "3000").param("cutoff_high", "2000");
    const std::string e = refusal(b);
    CHECK(e.find("cutoff_high = '2000'") != std::string::npos);
    CHECK(e.find("cutoff is 3000") != std::string::npos);
  }
  SUBCASE("a decimation that does not divide the block") {
    ShardConfig b("adc0", WEIR_DTYPE_F32, 1000, kRate, "V");
    b.param("cutoff", "1000").param("decimate", "3");
    const std::string e = refusal(b);
    CHECK(e.find("decimate = '3'") != std::string::npos);
    CHECK(e.find("1000 samples per block") != std::string::npos);
  }
  SUBCASE("an even tap count for a high-pass") {
    ShardConfig b("adc0", WEIR_DTYPE_F32, kBlock, kRate, "V");
    b.param("type", "highpass").param("cutoff", "1000").param("taps", "100");
    const std::string e = refusal(b);
    CHECK(e.find("taps = '100'") != std::string::npos);
    CHECK(e.find("odd") != std::string::npos);
  }
  SUBCASE("no cutoff at all") {
    ShardConfig b("adc0", WEIR_DTYPE_F32, kBlock, kRate, "V");
    CHECK(refusal(b).find("cutoff is required") != std::string::npos);
  }
  SUBCASE("an unknown type") {
    ShardConfig b("adc0", WEIR_DTYPE_F32, kBlock, kRate, "V");
    b.param("type", "comb").param("cutoff", "100");
    const std::string e = refusal(b);
    CHECK(e.find("type = 'comb'") != std::string::npos);
    CHECK(e.find("notch") != std::string::npos);
  }
}

TEST_CASE("a low-pass with decimation passes the band and rejects what would alias") {
  ShardConfig b("adc0", WEIR_DTYPE_F64, kBlock, kRate, "V");
  b.param("type", "lowpass").param("cutoff", "2000").param("decimate", "4");
  const std::size_t n = 40 * kBlock;  // one second
  const double out_rate = kRate / 4;
  const std::size_t settle = 100;     // output samples: the 101-tap FIR settles in 26
  const auto pass = run(b, tones({1000}, n));
  REQUIRE(pass.size() == n / 4);
  const auto steady = std::span<const float>(pass).subspan(settle, 6000);  // half a second: whole cycles
  CHECK(std::abs(weir::test::to_db(weir::test::tone_amplitude(steady, 1000, out_rate))) < 0.1);

  const auto alias = run(b, tones({7000}, n));  // would fold to 5 kHz
  CHECK(weir::test::to_db(weir::test::tone_amplitude(std::span<const float>(alias).subspan(settle, 6000), 5000,
                                                     out_rate)) < -50);
}

TEST_CASE("a high-pass with decimation filters first and then decimates") {
  ShardConfig b("adc0", WEIR_DTYPE_F64, kBlock, kRate, "V");
  b.param("type", "highpass").param("cutoff", "1500").param("decimate", "4");
  const std::size_t n = 40 * kBlock;
  const auto y = run(b, tones({300, 3000}, n));
  REQUIRE(y.size() == n / 4);
  const auto steady = std::span<const float>(y).subspan(200, 6000);
  CHECK(weir::test::to_db(weir::test::tone_amplitude(steady, 300, kRate / 4)) < -50);
  CHECK(std::abs(weir::test::to_db(weir::test::tone_amplitude(steady, 3000, kRate / 4))) < 0.1);
}

TEST_CASE("the dc type removes an offset") {
  ShardConfig b("adc0", WEIR_DTYPE_F64, kBlock, kRate, "V");
  b.param("type", "dc").param("cutoff", "20");
  const auto y = run(b, tones({1000}, 10 * kBlock, 3.0));
  REQUIRE(y.size() == 10 * kBlock);
  const auto tail = std::span<const float>(y).subspan(y.size() - 4800);
  CHECK(std::abs(std::accumulate(tail.begin(), tail.end(), 0.0) / 4800.0) < 1e-3);
}

TEST_CASE("a notch removes its tone and keeps the rest") {
  ShardConfig b("adc0", WEIR_DTYPE_F64, kBlock, kRate, "V");
  b.param("type", "notch").param("cutoff", "1000").param("q", "5");
  const auto y = run(b, tones({1000, 6000}, 10 * kBlock));
  const auto tail = std::span<const float>(y).subspan(y.size() - 4800);
  CHECK(weir::test::to_db(weir::test::tone_amplitude(tail, 1000, kRate)) < -50);
  CHECK(std::abs(weir::test::to_db(weir::test::tone_amplitude(tail, 6000, kRate))) < 0.1);
}

TEST_CASE("a block dropped at the source is filtered anyway so later blocks are unchanged") {
  ShardConfig b("adc0", WEIR_DTYPE_F64, kBlock, kRate, "V");
  b.param("type", "bandpass").param("cutoff", "1000").param("cutoff_high", "3000").param("decimate", "2");
  const auto x = weir::test::noise(kRate, 1.0, 5 * kBlock, 29);
  const std::vector<double> xd(x.begin(), x.end());
  const auto all = run(b, xd);
  weir::shard_test::FakeHost host;
  host.drop_claims = 1;
  const auto dropped = run(b, xd, &host);
  REQUIRE(all.size() == 5 * kBlock / 2);
  REQUIRE(dropped.size() == 4 * kBlock / 2);
  CHECK(std::vector<float>(all.begin() + kBlock / 2, all.end()) == dropped);
}

}  // TEST_SUITE

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "weir/shard_fake_host.hpp"
#include "weir/dsp/event_shards.hpp"

using namespace weir::shard_test;

namespace {

const char* const kStats[] = {"mean", "rms", "std", "min", "max", "p2p"};

// mean, rms, std, min, max, p2p of `x`, two-pass in long double.
std::vector<double> reference(const std::vector<double>& x) {
  long double sum = 0, sq = 0, sq_raw = 0;
  double lo = x[0], hi = x[0];
  for (const double v : x) {
    sum += v;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  const long double mean = sum / static_cast<long double>(x.size());
  for (const double v : x) {
    sq += (v - mean) * (v - mean);
    sq_raw += static_cast<long double>(v) * v;
  }
  const auto n = static_cast<long double>(x.size());
  return {static_cast<double>(mean), static_cast<double>(std::sqrt(sq_raw / n)), static_cast<double>(std::sqrt(sq / n)),
          lo, hi, hi - lo};
}

}  // namespace

TEST_SUITE("dsp.events.stats_shard") {

TEST_CASE("the stats shard declares one f64 key per statistic, per block and over the window") {
  const weir_shard_api* api = weir_builtin_stats(WEIR_SHARD_ABI_VERSION);
  REQUIRE(api != nullptr);
  CHECK(std::string(api->name) == "stats");
  CHECK(weir_builtin_stats(WEIR_SHARD_ABI_VERSION + 1) == nullptr);
  CHECK((api->input_dtypes & (1U << WEIR_DTYPE_C64)) == 0);
  CHECK((api->input_dtypes & (1U << WEIR_DTYPE_I16)) != 0);
  ShardConfig b("adc0", WEIR_DTYPE_F32, 256, 1e6, "V", {{"window", "1024"}});
  auto [shard, error] = configure(*api, b.build());
  REQUIRE_MESSAGE(shard != nullptr, error);
  // 12 statistics, the per-block stamp, and the window's stamp, partial flag, length and its units.
  REQUIRE(b.config().output_count == 17);
  const auto key_type = [&b](const std::string& name) {
    const int i = output_index(b.config(), name);
    REQUIRE_MESSAGE(i >= 0, name);
    return b.config().outputs[i].key_type;
  };
  CHECK(key_type("adc0.block_start_ns") == WEIR_KEY_U64);
  CHECK(key_type("adc0.window.start_ns") == WEIR_KEY_U64);
  CHECK(key_type("adc0.window.partial") == WEIR_KEY_U64);
  CHECK(key_type("adc0.window.window_s") == WEIR_KEY_F64);
  CHECK(key_type("adc0.window.window_s_units") == WEIR_KEY_TEXT);
  for (const char* s : kStats) {
    for (const std::string prefix : {"adc0.", "adc0.window."}) {
      const int i = output_index(b.config(), prefix + s);
      REQUIRE_MESSAGE(i >= 0, (prefix + s));
      const auto& out = b.config().outputs[i];
      CHECK(out.kind == WEIR_OUTPUT_KEY);
      CHECK(out.key_type == WEIR_KEY_F64);
      CHECK(out.max_bytes == 8);
    }
  }
  api->stop(shard);
}

TEST_CASE("bad stats parameters are refused naming the kind, the parameter, the value and the range") {
  const weir_shard_api* api = weir_builtin_stats(WEIR_SHARD_ABI_VERSION);
  const auto refused = [api](std::vector<std::pair<std::string, std::string>> params, std::uint32_t dtype,
                             std::vector<std::string> words) {
    ShardConfig b("adc0", dtype, 256, 1e6, "V", std::move(params));
    auto [shard, error] = configure(*api, b.build());
    CHECK(shard == nullptr);
    CHECK(b.config().output_count == 0);
    for (const auto& w : words) CHECK_MESSAGE(error.find(w) != std::string::npos, error, " lacks ", w);
  };
  refused({{"window", "1000"}}, WEIR_DTYPE_F32, {"stats", "window", "1000", "multiple", "256", "768 or 1024"});
  refused({{"window", "-5"}}, WEIR_DTYPE_F32, {"stats", "window", "-5", "allowed 0 to"});
  refused({{"outputs", "mean,median"}}, WEIR_DTYPE_F32, {"stats", "outputs", "median"});
  refused({{"block", "false"}}, WEIR_DTYPE_F32, {"stats", "block", "window", "nothing to publish"});
  refused({{"block", "maybe"}}, WEIR_DTYPE_F32, {"stats", "block", "maybe", "true or false"});
  refused({{"windw", "256"}}, WEIR_DTYPE_F32, {"stats", "unknown parameter 'windw'", "window"});
  refused({}, WEIR_DTYPE_C64, {"stats", "adc0", "c64"});
}

TEST_CASE("stats shard keys equal an independent computation for i16 blocks and the window") {
  const weir_shard_api* api = weir_builtin_stats(WEIR_SHARD_ABI_VERSION);
  const std::uint32_t block = 500;
  ShardConfig b("adc0", WEIR_DTYPE_I16, block, 1e6, "V", {{"window", "1500"}, {"outputs", "mean, std,max,p2p,rms,min"}});
  auto [shard, error] = configure(*api, b.build());
  REQUIRE_MESSAGE(shard != nullptr, error);
  FakeHost fake(b.config());
  const weir_shard_host host = fake.table();
  std::vector<std::int16_t> codes(block);
  std::vector<double> all;
  for (std::uint64_t n = 0; n < 8; ++n) {
    for (std::uint32_t i = 0; i < block; ++i) {
      const auto k = static_cast<double>(n * block + i);
      codes[i] = static_cast<std::int16_t>(std::lround(12000 * std::sin(k * 0.0123) + 300 * std::cos(k * 0.77) - 150));
      all.push_back(codes[i]);
    }
    const weir_shard_block in{codes.data(), block, 0, n, 1000 + n, 2000 + n, n * block};
    REQUIRE(api->process(shard, &in, &host) == 0);
    const std::vector<double> last(all.end() - block, all.end());
    const std::vector<double> window(all.end() - std::min<std::size_t>(all.size(), 1500), all.end());
    const std::vector<double> want_block = reference(last), want_window = reference(window);
    for (std::size_t s = 0; s < 6; ++s) {
      CAPTURE(kStats[s]);
      const double got_block = fake.f64(static_cast<std::uint32_t>(output_index(b.config(), std::string("adc0.") + kStats[s])));
      const double got_window =
          fake.f64(static_cast<std::uint32_t>(output_index(b.config(), std::string("adc0.window.") + kStats[s])));
      // Relative to the signal's scale (its rms), so a mean near 0 is held to the same precision.
      CHECK(std::fabs(got_block - want_block[s]) <= 1e-12 * want_block[1]);
      CHECK(std::fabs(got_window - want_window[s]) <= 1e-12 * want_window[1]);
    }
  }
  CHECK(fake.misuse == 0);
  api->stop(shard);
}

TEST_CASE("a stats shard with some outputs and no per-block keys writes only those") {
  const weir_shard_api* api = weir_builtin_stats(WEIR_SHARD_ABI_VERSION);
  ShardConfig b("adc0", WEIR_DTYPE_F64, 4, 10.0, "V", {{"window", "8"}, {"outputs", "min,max"}, {"block", "false"}});
  auto [shard, error] = configure(*api, b.build());
  REQUIRE_MESSAGE(shard != nullptr, error);
  REQUIRE(b.config().output_count == 6);  // and the window's stamp, partial flag, length and units
  CHECK(std::string(b.config().outputs[0].name) == "adc0.window.min");
  CHECK(std::string(b.config().outputs[1].name) == "adc0.window.max");
  FakeHost fake(b.config());
  const weir_shard_host host = fake.table();
  const double first[4] = {1, 2, 3, 4}, second[4] = {-7, 0, 0, 9}, third[4] = {5, 5, 5, 5};
  const double* blocks[] = {first, second, third};
  for (std::uint64_t n = 0; n < 3; ++n) {
    const weir_shard_block in{blocks[n], 4, 0, n, 0, 0, 4 * n};
    REQUIRE(api->process(shard, &in, &host) == 0);
  }
  CHECK(fake.f64(0) == -7);  // window = blocks 2 and 3
  CHECK(fake.f64(1) == 9);
  CHECK(fake.key_writes[0].size() == 3);
  api->stop(shard);
}

TEST_CASE("a block larger than the declared block size is processed in chunks as one block") {
  const weir_shard_api* api = weir_builtin_stats(WEIR_SHARD_ABI_VERSION);
  ShardConfig b("adc0", WEIR_DTYPE_F32, 100, 1e3, "V", {{"outputs", "mean,std,min,max"}});
  auto [shard, error] = configure(*api, b.build());
  REQUIRE_MESSAGE(shard != nullptr, error);
  FakeHost fake(b.config());
  const weir_shard_host host = fake.table();
  std::vector<float> x(1037);
  std::vector<double> as_double;
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<float>(1e3 + std::sin(static_cast<double>(i) * 0.01) * static_cast<double>(i % 13));
    as_double.push_back(x[i]);
  }
  const weir_shard_block in{x.data(), static_cast<std::uint32_t>(x.size()), 0, 0, 0, 0, 0};
  REQUIRE(api->process(shard, &in, &host) == 0);
  const std::vector<double> want = reference(as_double);
  CHECK(std::fabs(fake.f64(0) - want[0]) <= 1e-12 * want[1]);
  CHECK(fake.f64(1) == doctest::Approx(want[2]).epsilon(1e-9));
  CHECK(fake.f64(2) == want[3]);
  CHECK(fake.f64(3) == want[4]);
  CHECK(fake.key_writes[0].size() == 1);
  api->stop(shard);
}

TEST_CASE("f32 blocks read in place and f32 blocks at an odd address give the same keys") {
  const weir_shard_api* api = weir_builtin_stats(WEIR_SHARD_ABI_VERSION);
  const std::uint32_t block = 4096;
  std::vector<float> x(block);
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(0.5 + 0.25 * std::sin(static_cast<double>(i) * 0.003) + 1e-3 * static_cast<double>(i % 7));
  std::vector<unsigned char> odd(x.size() * sizeof(float) + 1);
  std::memcpy(odd.data() + 1, x.data(), x.size() * sizeof(float));
  std::vector<double> got[2];
  for (int pass = 0; pass < 2; ++pass) {
    ShardConfig b("adc0", WEIR_DTYPE_F32, block, 1e6, "V", {});
    auto [shard, error] = configure(*api, b.build());
    REQUIRE_MESSAGE(shard != nullptr, error);
    FakeHost fake(b.config());
    const weir_shard_host host = fake.table();
    const void* samples = pass == 0 ? static_cast<const void*>(x.data()) : static_cast<const void*>(odd.data() + 1);
    const weir_shard_block in{samples, block, 0, 0, 0, 0, 0};
    REQUIRE(api->process(shard, &in, &host) == 0);
    for (std::uint32_t s = 0; s < 6; ++s) got[pass].push_back(fake.f64(s));
    api->stop(shard);
  }
  const std::vector<double> want = reference(std::vector<double>(x.begin(), x.end()));
  for (std::size_t s = 0; s < 6; ++s) {
    CAPTURE(kStats[s]);
    CHECK(std::fabs(got[0][s] - want[s]) <= 1e-12 * want[1]);
    CHECK(std::fabs(got[1][s] - want[s]) <= 1e-12 * want[1]);
  }
  CHECK(got[0][3] == got[1][3]);  // min and max are exact on both paths
  CHECK(got[0][4] == got[1][4]);
}

}  // TEST_SUITE

TEST_SUITE("dsp.events.stats_shard.stamps") {

TEST_CASE("window stats are stamped with their first sample and never span an input gap") {
  // Level 1 before a gap the writer published (the sample index continues: the host flags the
  // block after it), level 5 after; a window of 3 blocks, every value checked as it is written.
  const weir_shard_api* api = weir_builtin_stats(WEIR_SHARD_ABI_VERSION);
  const std::uint32_t block = 4;
  const double rate = 1000;  // 4 ms blocks
  ShardConfig b("adc0", WEIR_DTYPE_F64, block, rate, "V", {{"window", "12"}, {"outputs", "mean,min,max"}});
  auto [shard, error] = configure(*api, b.build());
  REQUIRE_MESSAGE(shard != nullptr, error);
  const auto index = [&b](const std::string& name) {
    const int i = output_index(b.config(), name);
    REQUIRE_MESSAGE(i >= 0, name);
    return static_cast<std::uint32_t>(i);
  };
  FakeHost fake(b.config());
  const weir_shard_host host = fake.table();
  const auto stamp = [](std::uint64_t n) { return 5'000'000'000ULL + n * 4'000'000 + n * 17; };  // irregular
  for (std::uint64_t n = 0; n < 10; ++n) {
    CAPTURE(n);
    const bool after = n >= 5;
    const std::vector<double> x(block, after ? 5.0 : 1.0);
    const std::uint32_t flags = n == 5 ? WEIR_SHARD_AFTER_GAP : 0U;
    const std::uint64_t t = stamp(after ? n + 3 : n);  // three blocks' time went missing
    const weir_shard_block in{x.data(), block, flags, n, t, t, n * block};
    REQUIRE(api->process(shard, &in, &host) == 0);
    const double want = after ? 5.0 : 1.0;
    CHECK(fake.f64(index("adc0.window.mean")) == want);  // never a mix of 1 and 5
    CHECK(fake.f64(index("adc0.window.min")) == want);
    CHECK(fake.f64(index("adc0.window.max")) == want);
    CHECK(fake.u64(index("adc0.block_start_ns")) == t);
    // The window starts at the oldest block it holds: up to 2 blocks back, never before the gap.
    const std::uint64_t run_start = after ? 5 : 0;
    const std::uint64_t first = std::max(run_start, n < 2 ? 0 : n - 2);
    CHECK(fake.u64(index("adc0.window.start_ns")) == stamp(after ? first + 3 : first));
    CHECK(fake.u64(index("adc0.window.partial")) == (n - run_start < 2 ? 1U : 0U));
  }
  CHECK(fake.f64(index("adc0.window.window_s")) == doctest::Approx(0.012));
  CHECK(fake.last_key(index("adc0.window.window_s_units")) == "s");
  CHECK(fake.misuse == 0);
  api->stop(shard);
}

}  // TEST_SUITE

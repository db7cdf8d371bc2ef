// What a working script computes and writes: keys, derived blocks, the view's fields.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "lua_test_util.hpp"

namespace {

using weir::shard_test::FakeHost;
using weir::test::LuaShardUnderTest;
using weir::test::ScriptDir;

constexpr std::uint32_t kBlock = 64;

// A block of a sine with a block-dependent amplitude and offset, so each block's answers differ.
template <class T>
std::vector<T> sine_block(std::uint64_t sequence, double amplitude) {
  std::vector<T> out(kBlock);
  for (std::uint32_t i = 0; i < kBlock; ++i) {
    const double x = amplitude * (0.5 + 0.1 * static_cast<double>(sequence)) *
                         std::sin(0.37 * static_cast<double>(i) + static_cast<double>(sequence)) +
                     3.0 * static_cast<double>(sequence);
    out[i] = static_cast<T>(std::is_integral_v<T> ? std::round(x) : x);
  }
  return out;
}

template <class T>
void check_peak_and_rms(std::uint32_t dtype, double amplitude) {
  ScriptDir dir;
  const auto script = dir.write("stats.lua", {
                                                 "function process(block)",
                                                 "  local sumsq = 0.0",
                                                 "  for i = 1, #block do local x = block[i]; sumsq = sumsq + x * x end",
                                                 "  weir.set('adc0.peak', weir.max(block))",
                                                 "  weir.set('adc0.rms', math.sqrt(sumsq / #block))",
                                                 "  weir.set('adc0.min', block:min())",
                                                 "  weir.set('adc0.sum', weir.sum(block))",
                                                 "end",
                                             });
  LuaShardUnderTest shard({{"script", script}, {"outputs", "key:adc0.peak, key:adc0.rms,key:adc0.min,key:adc0.sum"}},
                          dtype, kBlock);
  REQUIRE_MESSAGE(shard.ok(), shard.error());
  REQUIRE(shard.config().output_count == 4);
  CHECK(std::string(shard.config().outputs[1].name) == "adc0.rms");
  CHECK(shard.config().outputs[1].kind == WEIR_OUTPUT_KEY);
  CHECK(shard.config().outputs[1].key_type == WEIR_KEY_F64);
  CHECK(shard.config().outputs[1].max_bytes == sizeof(double));

  FakeHost host;
  for (std::uint64_t seq = 1; seq <= 3; ++seq) {
    const auto samples = sine_block<T>(seq, amplitude);
    REQUIRE(shard.process(host, samples.data(), kBlock, seq) == 0);
    double sumsq = 0.0;
    for (T x : samples) sumsq += static_cast<double>(x) * static_cast<double>(x);
    CHECK(host.f64(0) == static_cast<double>(*std::max_element(samples.begin(), samples.end())));
    CHECK(host.f64(1) == doctest::Approx(std::sqrt(sumsq / kBlock)).epsilon(1e-12));
    CHECK(host.f64(2) == static_cast<double>(*std::min_element(samples.begin(), samples.end())));
    CHECK(host.f64(3) ==
          doctest::Approx(std::accumulate(samples.begin(), samples.end(), 0.0,
                                          [](double a, T x) { return a + static_cast<double>(x); }))
              .epsilon(1e-12));
  }
  CHECK(host.key_writes[1].size() == 3);
}

}  // namespace

TEST_SUITE("dsp_shards.lua.values") {

TEST_CASE("a script's peak and RMS keys match the block for f32 and i16 input") {
  SUBCASE("f32") { check_peak_and_rms<float>(WEIR_DTYPE_F32, 1.5); }
  SUBCASE("i16") { check_peak_and_rms<std::int16_t>(WEIR_DTYPE_I16, 20000.0); }
}

TEST_CASE("every readable dtype reaches the script with its value") {
  ScriptDir dir;
  const auto script = dir.write("dtypes.lua", {
                                                  "function process(block)",
                                                  "  weir.set('max', weir.max(block))",
                                                  "  weir.set('min', weir.min(block))",
                                                  "  weir.set('sum', weir.sum(block))",
                                                  "  weir.set('second', block[2])",
                                                  "  weir.set('integer', math.type(block[2]) == 'integer' and 1 or 0)",
                                                  "  weir.set('dtype', block.dtype .. '/' .. weir.dtype)",
                                                  "end",
                                              });
  const auto run = [&](std::uint32_t dtype, const char* name, const auto& samples, double lowest, bool integer) {
    const std::string dtype_name = name;
    CAPTURE(dtype_name);
    LuaShardUnderTest shard({{"script", script},
                             {"outputs", "key:max,key:min,key:sum,key:second,key:integer,keybytes:dtype:16"}},
                            dtype, static_cast<std::uint32_t>(samples.size()));
    REQUIRE_MESSAGE(shard.ok(), shard.error());
    FakeHost host;
    REQUIRE(shard.process(host, samples.data(), static_cast<std::uint32_t>(samples.size()), 1) == 0);
    CHECK(host.f64(0) == 100.0);
    CHECK(host.f64(1) == lowest);
    CHECK(host.f64(2) == doctest::Approx(100.0 + lowest + 7.0 + 2.0));
    CHECK(host.f64(3) == lowest);
    CHECK(host.f64(4) == (integer ? 1.0 : 0.0));
    CHECK(host.key_writes[5].back() == std::string(name) + "/" + name);
  };
  run(WEIR_DTYPE_I8, "i8", std::vector<std::int8_t>{100, -100, 7, 2}, -100.0, true);
  run(WEIR_DTYPE_U8, "u8", std::vector<std::uint8_t>{100, 0, 7, 2}, 0.0, true);
  run(WEIR_DTYPE_I16, "i16", std::vector<std::int16_t>{100, -30000, 7, 2}, -30000.0, true);
  run(WEIR_DTYPE_U16, "u16", std::vector<std::uint16_t>{100, 1, 7, 2}, 1.0, true);
  run(WEIR_DTYPE_I32, "i32", std::vector<std::int32_t>{100, -2'000'000'000, 7, 2}, -2e9, true);
  run(WEIR_DTYPE_U32, "u32", std::vector<std::uint32_t>{100, 1, 7, 2}, 1.0, true);
  run(WEIR_DTYPE_I64, "i64", std::vector<std::int64_t>{100, -(1LL << 40), 7, 2}, -1099511627776.0, true);
  run(WEIR_DTYPE_F32, "f32", std::vector<float>{100.0F, -0.5F, 7.0F, 2.0F}, -0.5, false);
  run(WEIR_DTYPE_F64, "f64", std::vector<double>{100.0, -1e-3, 7.0, 2.0}, -1e-3, false);
}

TEST_CASE("weir.emit publishes a derived block from a table or from the view") {
  ScriptDir dir;
  const auto script = dir.write("emit.lua", {
                                                "local doubled = {}  -- reused every block: no garbage",
                                                "function process(block)",
                                                "  for i = 1, #block do doubled[i] = block[i] * 2 end",
                                                "  assert(weir.emit('adc0.double', doubled))",
                                                "  assert(weir.emit('adc0.copy', block))",
                                                "end",
                                            });
  LuaShardUnderTest shard({{"script", script}, {"outputs", "channel:adc0.double,channel:adc0.copy"}}, WEIR_DTYPE_I16,
                          kBlock, 2048.0);
  REQUIRE_MESSAGE(shard.ok(), shard.error());
  const weir_shard_output& declared = shard.config().outputs[0];
  CHECK(declared.kind == WEIR_OUTPUT_CHANNEL);
  CHECK(declared.dtype == WEIR_DTYPE_F32);
  CHECK(declared.samples_per_block == kBlock);
  CHECK(declared.rate_hz == 2048.0);

  FakeHost host;
  const auto samples = sine_block<std::int16_t>(4, 1000.0);
  REQUIRE(shard.process(host, samples.data(), kBlock, 4) == 0);
  REQUIRE(host.published.size() == 2);
  const auto& doubled = host.published[0];
  CHECK(doubled.output == 0);
  CHECK(doubled.realtime_ns == 1'700'000'000'000'000'004ULL);
  CHECK(doubled.flags == 0x5U);
  REQUIRE(doubled.samples.size() == kBlock);
  const auto& copy = host.published[1];
  CHECK(copy.output == 1);
  REQUIRE(copy.samples.size() == kBlock);
  for (std::uint32_t i = 0; i < kBlock; ++i) {
    CHECK(doubled.samples[i] == static_cast<float>(2 * samples[i]));
    CHECK(copy.samples[i] == static_cast<float>(samples[i]));
  }
}

TEST_CASE("the view is one object re-pointed at the host's samples every block") {
  ScriptDir dir;
  const auto script = dir.write("view.lua", {
                                                "local first",
                                                "function process(block)",
                                                "  first = first or block",
                                                "  weir.set('same', rawequal(first, block) and 1 or 0)",
                                                "  weir.set('v1', block[1])",
                                                "  weir.set('past_end', block[#block + 1] == nil and 1 or 0)",
                                                "  weir.set('sequence', block.sequence)",
                                                "  weir.set('first_sample', block.first_sample)",
                                                "  weir.set('realtime_ns', block.realtime_ns - 1700000000000000000)",
                                                "  weir.set('rate', block.rate)",
                                                "  weir.set('count', block.count)",
                                                "end",
                                            });
  LuaShardUnderTest shard(
      {{"script", script},
       {"outputs", "key:same,key:v1,key:past_end,key:sequence,key:first_sample,key:realtime_ns,key:rate,key:count"}},
      WEIR_DTYPE_F32, 8, 500.0);
  REQUIRE_MESSAGE(shard.ok(), shard.error());
  FakeHost host;
  float samples[8] = {1.5F, 2, 3, 4, 5, 6, 7, 8};
  REQUIRE(shard.process(host, samples, 8, 10) == 0);
  CHECK(host.f64(1) == 1.5);
  samples[0] = -42.25F;  // the host changes its buffer: no copy of the old block may survive
  REQUIRE(shard.process(host, samples, 8, 11) == 0);
  CHECK(host.f64(0) == 1.0);
  CHECK(host.f64(1) == -42.25);
  CHECK(host.f64(2) == 1.0);
  CHECK(host.f64(3) == 11.0);
  CHECK(host.f64(4) == 88.0);
  CHECK(host.f64(5) == 11.0);
  CHECK(host.f64(6) == 500.0);
  REQUIRE(shard.process(host, samples, 5, 12) == 0);  // a short block
  CHECK(host.f64(7) == 5.0);
}

TEST_CASE("a script that allocates nothing makes no heap allocation per block") {
  ScriptDir dir;
  const auto script = dir.write("quiet.lua", {
                                                 "function process(block)",
                                                 "  local sumsq = 0.0",
                                                 "  for i = 1, #block do sumsq = sumsq + block[i] ^ 2 end",
                                                 "  weir.set('rms', math.sqrt(sumsq / #block))",
                                                 "  weir.set('peak', block:max())",
                                                 "  weir.set('seq', block.sequence)",
                                                 "end",
                                             });
  LuaShardUnderTest shard({{"script", script}, {"outputs", "key:rms,key:peak,key:seq"}}, WEIR_DTYPE_F32, kBlock);
  REQUIRE_MESSAGE(shard.ok(), shard.error());
  FakeHost host;
  const auto samples = sine_block<float>(1, 1.0);
  for (std::uint64_t seq = 0; seq < 3; ++seq) REQUIRE(shard.process(host, samples.data(), kBlock, seq) == 0);
  const auto before = shard.stats();
  for (std::uint64_t seq = 3; seq < 203; ++seq) REQUIRE(shard.process(host, samples.data(), kBlock, seq) == 0);
  const auto after = shard.stats();
  CHECK(after.blocks == before.blocks + 200);
  CHECK(after.heap_allocations == before.heap_allocations);
  CHECK(after.heap_bytes == before.heap_bytes);
  CHECK(host.f64(2) == 202.0);

  // The counter does see a script that makes a table per block.
  const auto garbage = dir.write("garbage.lua", {"function process(block) local t = {block[1], block[2]} end"});
  LuaShardUnderTest wasteful({{"script", garbage}});
  REQUIRE_MESSAGE(wasteful.ok(), wasteful.error());
  const auto start = wasteful.stats().heap_allocations;
  for (std::uint64_t seq = 0; seq < 10; ++seq) REQUIRE(wasteful.process(host, samples.data(), kBlock, seq) == 0);
  CHECK(wasteful.stats().heap_allocations >= start + 10);
}

TEST_CASE("a keybytes output takes a string up to its declared size") {
  ScriptDir dir;
  const auto script = dir.write("bytes.lua", {
                                                 "function process(block)",
                                                 "  weir.set('adc0.state', string.format('seq=%d', block.sequence))",
                                                 "end",
                                             });
  LuaShardUnderTest shard({{"script", script}, {"outputs", "keybytes:adc0.state:8"}});
  REQUIRE_MESSAGE(shard.ok(), shard.error());
  CHECK(shard.config().outputs[0].key_type == WEIR_KEY_BYTES);
  CHECK(shard.config().outputs[0].max_bytes == 8);
  FakeHost host;
  const std::vector<float> samples(kBlock, 0.0F);
  REQUIRE(shard.process(host, samples.data(), kBlock, 42) == 0);
  CHECK(host.key_writes[0].back() == "seq=42");
  CHECK(shard.process(host, samples.data(), kBlock, 123456) == WEIR_LUA_SCRIPT_ERROR);  // "seq=123456" is 10 bytes
  CHECK(shard.last_error().find("bytes.lua:2: weir.set: 10 bytes exceed the 8 declared for 'adc0.state'") !=
        std::string::npos);
  CHECK(host.key_writes[0].size() == 1);
}

TEST_CASE("an array output takes a table of exactly its declared numbers as f64 elements") {
  ScriptDir dir;
  const auto script = dir.write("array.lua", {
                                                 "function process(block)",
                                                 "  if block.sequence == 1 then weir.set('adc0.hist', {1, 2}) return end",
                                                 "  weir.set('adc0.hist', {block.sequence, 0.5, -3})",
                                                 "end",
                                             });
  LuaShardUnderTest shard({{"script", script}, {"outputs", "array:adc0.hist:3"}});
  REQUIRE_MESSAGE(shard.ok(), shard.error());
  const weir_shard_output& out = shard.config().outputs[0];
  CHECK(out.key_type == WEIR_KEY_ARRAY);
  CHECK(out.array_dtype == WEIR_DTYPE_F64);
  CHECK(out.array_rank == 1);
  CHECK(out.array_dims[0] == 3);
  CHECK(out.max_bytes == 3 * sizeof(double));
  FakeHost host;
  const std::vector<float> samples(kBlock, 0.0F);
  REQUIRE(shard.process(host, samples.data(), kBlock, 7) == 0);
  CHECK(host.array<double>(0) == std::vector<double>{7.0, 0.5, -3.0});
  CHECK(shard.process(host, samples.data(), kBlock, 1) == WEIR_LUA_SCRIPT_ERROR);  // two numbers, not three
  CHECK(shard.last_error().find("array.lua:2: weir.set: 'adc0.hist' is an array of 3 numbers, not 2") !=
        std::string::npos);
  CHECK(host.writes(0).size() == 1);
}

TEST_CASE("the example peak.lua runs as its README says") {
  LuaShardUnderTest shard({{"script", WEIR_LUA_EXAMPLES_DIR "/peak.lua"},
                           {"outputs", "key:adc0.peak,key:adc0.rms,channel:adc0.clipped"}},
                          WEIR_DTYPE_I16, 6);
  REQUIRE_MESSAGE(shard.ok(), shard.error());
  FakeHost host;
  const std::int16_t samples[6] = {100, -32768, 32767, 5, -7, 0};
  REQUIRE(shard.process(host, samples, 6, 1) == 0);
  CHECK(host.f64(0) == 32768.0);
  double sumsq = 0;
  for (const std::int16_t x : samples) sumsq += static_cast<double>(x) * x;
  CHECK(host.f64(1) == doctest::Approx(std::sqrt(sumsq / 6)));
  REQUIRE(host.published.size() == 1);
  CHECK(host.published[0].samples == std::vector<float>{0, 1, 1, 0, 0, 0});
}

}  // TEST_SUITE

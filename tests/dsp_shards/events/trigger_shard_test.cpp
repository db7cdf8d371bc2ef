#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "weir/shard_fake_host.hpp"
#include "weir/dsp/event_shards.hpp"

using namespace weir::shard_test;

TEST_SUITE("dsp.events.trigger_shard") {

TEST_CASE("the trigger shard declares an f32 events channel of pre + post samples and a u64 count key") {
  const weir_shard_api* api = weir_builtin_trigger(WEIR_SHARD_ABI_VERSION);
  REQUIRE(api != nullptr);
  CHECK(std::string(api->name) == "trigger");
  CHECK(weir_builtin_trigger(0) == nullptr);
  ShardConfig b("adc0", WEIR_DTYPE_U16, 1024, 250e3, "V", {{"pre", "30"}, {"post", "70"}, {"level", "1000"}});
  auto [shard, error] = configure(*api, b.build());
  REQUIRE_MESSAGE(shard != nullptr, error);
  REQUIRE(b.config().output_count == 4);
  const auto& events = b.config().outputs[output_index(b.config(), "adc0.events")];
  CHECK(events.kind == WEIR_OUTPUT_CHANNEL);
  CHECK(events.dtype == WEIR_DTYPE_F32);
  CHECK(events.samples_per_block == 100);
  CHECK(events.rate_hz == 250e3);
  CHECK(std::string(events.units) == "V");
  CHECK(events.frame_elements == 100);  // one capture per block, along time from the trigger sample
  CHECK(std::string(events.axis.name) == "time");
  CHECK(std::string(events.axis.units) == "s");
  CHECK(events.axis.start == doctest::Approx(-30 / 250e3));
  CHECK(events.axis.step == doctest::Approx(1 / 250e3));
  const auto& triggers = b.config().outputs[output_index(b.config(), "adc0.triggers")];
  CHECK(triggers.kind == WEIR_OUTPUT_KEY);
  CHECK(triggers.key_type == WEIR_KEY_U64);
  CHECK(triggers.max_bytes == 8);
  // Each capture is also a pulse on the event channel adc0.pulses: 4 f64 fields a pulse.
  const auto& pulses = b.config().outputs[output_index(b.config(), "adc0.pulses")];
  CHECK(pulses.dtype == WEIR_DTYPE_F64);
  CHECK(pulses.frame_elements == 4);
  CHECK(pulses.samples_per_block == 64 * 4);
  CHECK(std::string(pulses.axis.name) == "event");
  CHECK(std::string(pulses.units) == "V");
  CHECK(b.config().outputs[output_index(b.config(), "adc0.pulses_dropped")].key_type == WEIR_KEY_U64);
  api->stop(shard);
}

TEST_CASE("bad trigger parameters are refused naming the kind, the parameter, the value and the range") {
  const weir_shard_api* api = weir_builtin_trigger(WEIR_SHARD_ABI_VERSION);
  const auto refused = [api](std::vector<std::pair<std::string, std::string>> params, std::vector<std::string> words) {
    ShardConfig b("adc0", WEIR_DTYPE_F32, 256, 1e6, "V", std::move(params));
    auto [shard, error] = configure(*api, b.build());
    CHECK(shard == nullptr);
    for (const auto& w : words) CHECK_MESSAGE(error.find(w) != std::string::npos, error, " lacks ", w);
  };
  refused({{"pre", "0"}, {"post", "0"}}, {"trigger", "pre + post", "0 + 0", "1 to 16777216"});
  refused({{"hysteresis", "-1"}}, {"trigger", "hysteresis", "-1", "allowed 0 to"});
  refused({{"mode", "sideways"}}, {"trigger", "mode", "sideways", "level|rising|falling|both"});
  refused({{"pre", "20000000"}}, {"trigger", "pre", "20000000", "allowed 0 to 16777216"});
  refused({{"holdoff", "ten"}}, {"trigger", "holdoff", "ten", "not an integer"});
  refused({{"level", "nan"}}, {"trigger", "level", "nan", "not a finite number"});
}

TEST_CASE("the trigger shard publishes each capture as one block dated at its trigger sample") {
  const weir_shard_api* api = weir_builtin_trigger(WEIR_SHARD_ABI_VERSION);
  const std::uint32_t block = 256, pre = 16, post = 48;
  const double rate = 2e6;  // 500 ns per sample
  ShardConfig b("adc0", WEIR_DTYPE_U16, block, rate, "V",
                  {{"mode", "rising"}, {"level", "40000"}, {"hysteresis", "500"}, {"pre", "16"}, {"post", "48"}});
  auto [shard, error] = configure(*api, b.build());
  REQUIRE_MESSAGE(shard != nullptr, error);
  const auto events = static_cast<std::uint32_t>(output_index(b.config(), "adc0.events"));
  const auto triggers = static_cast<std::uint32_t>(output_index(b.config(), "adc0.triggers"));
  FakeHost fake(b.config());
  const weir_shard_host host = fake.table();

  // ADC codes: a 32768 baseline with a ramp of small values, and pulses to 50000 at known samples
  // (one right after a block boundary, one whose pre samples straddle it).
  const std::vector<std::uint64_t> starts{100, 256 + 3, 512 + 250, 1024 + 600};
  std::vector<std::uint16_t> x(2048);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<std::uint16_t>(32768 + i % 50);
  for (const auto s : starts)
    for (std::size_t i = s; i < s + 20; ++i) x[i] = 50000;
  const std::uint64_t t0 = 5'000'000'000ULL;
  for (std::uint64_t n = 0; n < x.size() / block; ++n) {
    const std::uint64_t first = n * block;
    const weir_shard_block in{x.data() + first, block, 0, n, t0 + first * 500, 0, first};
    REQUIRE(api->process(shard, &in, &host) == 0);
  }
  const auto pulses = static_cast<std::uint32_t>(output_index(b.config(), "adc0.pulses"));
  std::vector<FakeHost::Published> captures, pulse_blocks;
  for (const auto& p : fake.published) {
    REQUIRE((p.output == events || p.output == pulses));
    (p.output == events ? captures : pulse_blocks).push_back(p);
  }
  // A pulse block per input block, each holding the pulses finished in it, at their trigger times.
  REQUIRE(pulse_blocks.size() == x.size() / block);
  std::vector<std::uint64_t> pulse_ns;
  for (std::size_t n = 0; n < pulse_blocks.size(); ++n) {
    CHECK(pulse_blocks[n].realtime_ns == t0 + n * block * 500);
    const std::vector<double> fields = pulse_blocks[n].as_f64();
    for (std::size_t e = 0; e + 4 <= fields.size(); e += 4) {
      pulse_ns.push_back(static_cast<std::uint64_t>(static_cast<double>(pulse_blocks[n].realtime_ns) + fields[e]));
      CHECK(fields[e + 1] == 50000);  // the highest sample from the trigger on
      CHECK(fields[e + 3] == 0);
    }
  }
  REQUIRE(pulse_ns.size() == starts.size());
  for (std::size_t c = 0; c < starts.size(); ++c) CHECK(pulse_ns[c] == t0 + starts[c] * 500);
  REQUIRE(captures.size() == starts.size());
  for (std::size_t c = 0; c < starts.size(); ++c) {
    const auto& out = captures[c];
    CHECK(out.output == events);
    CHECK(out.realtime_ns == t0 + starts[c] * 500);
    REQUIRE(out.samples.size() == pre + post);
    for (std::size_t i = 0; i < pre + post; ++i) REQUIRE(out.samples[i] == static_cast<float>(x[starts[c] - pre + i]));
  }
  CHECK(fake.u64(triggers) == starts.size());
  CHECK(fake.misuse == 0);

  SUBCASE("a capture the host cannot take is skipped and still counted") {
    fake.drop_all = true;
    std::vector<std::uint16_t> more(block, 32768);
    for (std::size_t i = 100; i < 120; ++i) more[i] = 50000;
    const weir_shard_block in{more.data(), block, 0, 8, 0, 0, 2048};
    const std::size_t before = fake.published.size();
    REQUIRE(api->process(shard, &in, &host) == 0);
    CHECK(fake.published.size() == before);  // neither the capture nor the pulses block
    CHECK(fake.u64(triggers) == starts.size() + 1);
  }
  api->stop(shard);
}

TEST_CASE("the trigger's capture frames put the trigger sample at time 0 of their axis") {
  const weir_shard_api* api = weir_builtin_trigger(WEIR_SHARD_ABI_VERSION);
  const std::uint32_t block = 256, pre = 16, post = 48;
  const double rate = 2e6;
  ShardConfig b("adc0", WEIR_DTYPE_F32, block, rate, "V",
                {{"mode", "rising"}, {"level", "0.5"}, {"pre", std::to_string(pre)}, {"post", std::to_string(post)}});
  auto [shard, error] = configure(*api, b.build());
  REQUIRE_MESSAGE(shard != nullptr, error);
  const auto events = static_cast<std::uint32_t>(output_index(b.config(), "adc0.events"));
  FakeHost fake(b.config());
  const weir_shard_output declared = fake.output(events);
  CHECK(declared.frame_elements == pre + post);
  CHECK(declared.samples_per_block % declared.frame_elements == 0);
  CHECK(declared.rate_hz == rate);  // elements per second, as for any channel
  CHECK(declared.axis.start == -static_cast<double>(pre) / rate);
  CHECK(declared.axis.step == 1.0 / rate);

  std::vector<float> samples(block, 0.0F);
  for (std::uint32_t i = 100; i < block; ++i) samples[i] = 1.0F;  // one rising edge at sample 100
  const weir_shard_host host = fake.table();
  const weir_shard_block in{samples.data(), block, 0, 0, 0, 0, 0};
  REQUIRE(api->process(shard, &in, &host) == 0);
  REQUIRE(fake.published.size() == 2);  // the capture, then the input block's pulses
  CHECK(fake.published[1].output == static_cast<std::uint32_t>(output_index(b.config(), "adc0.pulses")));
  const std::vector<float>& capture = fake.published[0].samples;
  REQUIRE(capture.size() == pre + post);
  // The element at axis value 0 (index -start / step = pre) is the trigger sample; the one before is not.
  const auto zero = static_cast<std::size_t>(std::lround(-declared.axis.start / declared.axis.step));
  CHECK(zero == pre);
  CHECK(capture[zero] == 1.0F);
  CHECK(capture[zero - 1] == 0.0F);
  CHECK(fake.misuse == 0);
  api->stop(shard);
}

}  // TEST_SUITE

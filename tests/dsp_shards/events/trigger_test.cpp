#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "weir/dsp/trigger.hpp"

using namespace weir::dsp;

namespace {

constexpr double kRate = 1e6;
constexpr std::uint64_t kStartNs = 1'700'000'000'000'000'000ULL;

struct Captured {
  std::vector<float> samples;
  std::uint64_t index = 0;
  std::uint64_t realtime_ns = 0;
  bool rising = true;
};

// Feeds `x` to a trigger in blocks of `block`, each dated kStartNs + its first index / rate.
std::vector<Captured> run(Trigger& trigger, const std::vector<double>& x, std::size_t block, std::uint64_t first = 0) {
  std::vector<Captured> out;
  auto sink = [&out](const Capture& c) noexcept {
    out.push_back({std::vector<float>(c.samples.begin(), c.samples.end()), c.trigger_index, c.trigger_realtime_ns,
                   c.rising});
  };
  for (std::size_t at = 0; at < x.size(); at += block) {
    const std::size_t n = std::min(block, x.size() - at);
    const std::uint64_t index = first + at;
    const StreamTime time{index, kStartNs + static_cast<std::uint64_t>(std::llround(static_cast<double>(index) * 1e9 / kRate))};
    trigger.process(std::span<const double>(x.data() + at, n), index, time, sink);
  }
  return out;
}

Trigger make(TriggerMode mode, double level, double hysteresis, std::uint32_t pre, std::uint32_t post,
             std::uint64_t holdoff = 0) {
  TriggerConfig c;
  c.mode = mode;
  c.level = level;
  c.hysteresis = hysteresis;
  c.pre = pre;
  c.post = post;
  c.holdoff = holdoff;
  c.rate_hz = kRate;
  auto t = Trigger::create(c);
  REQUIRE_MESSAGE(t, (t ? "" : t.error().what));
  return std::move(*t);
}

// A ramp-free baseline (distinct values, so any misplaced sample shows) with rectangular pulses of
// height 1 and `width` samples starting at each of `starts`.
std::vector<double> pulses(std::size_t n, const std::vector<std::size_t>& starts, std::size_t width) {
  std::vector<double> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = 0.001 * static_cast<double>(i % 97) / 97.0;
  for (const std::size_t s : starts)
    for (std::size_t i = s; i < std::min(n, s + width); ++i) x[i] += 1.0;
  return x;
}

std::vector<std::uint64_t> indices(const std::vector<Captured>& captures) {
  std::vector<std::uint64_t> out;
  for (const auto& c : captures) out.push_back(c.index);
  return out;
}

}  // namespace

TEST_SUITE("dsp.events.trigger") {

TEST_CASE("a rising edge captures every pulse at its first sample, with exact pre- and post-trigger samples") {
  const std::vector<std::size_t> starts{150, 1003, 1500, 2222, 4800};
  const std::vector<double> x = pulses(5000, starts, 40);
  const std::uint32_t pre = 100, post = 300;
  for (const std::size_t block : {1U, 37U, 256U, 1000U, 5000U}) {
    CAPTURE(block);
    Trigger trigger = make(TriggerMode::rising, 0.5, 0.1, pre, post);
    const auto captures = run(trigger, x, block);
    // The pulse at 4800 ends the stream before its post samples are in: no capture (yet).
    REQUIRE(indices(captures) == std::vector<std::uint64_t>{150, 1003, 1500, 2222});
    for (const auto& c : captures) {
      REQUIRE(c.samples.size() == pre + post);
      for (std::size_t i = 0; i < pre + post; ++i)
        REQUIRE(c.samples[i] == static_cast<float>(x[c.index - pre + i]));  // pre spans earlier blocks
      CHECK(c.realtime_ns == kStartNs + c.index * 1000);  // 1 us per sample
      CHECK(c.rising);
    }
    CHECK(trigger.counters().triggers == 5);
    CHECK(trigger.counters().suppressed == 0);
  }
}

TEST_CASE("hysteresis suppresses re-triggers from noise around the level") {
  // Crosses 0.5 upwards at 10, then wobbles 0.45 <-> 0.55, drops to 0 at 60, rises again at 80.
  std::vector<double> x(120, 0.0);
  for (std::size_t i = 10; i < 60; ++i) x[i] = (i % 2 == 0) ? 0.55 : 0.45;
  for (std::size_t i = 80; i < 120; ++i) x[i] = 1.0;
  SUBCASE("without hysteresis every wobble fires") {
    Trigger trigger = make(TriggerMode::rising, 0.5, 0.0, 2, 1);
    const auto captures = run(trigger, x, 16);
    CHECK(captures.size() == 26);  // 25 upward wobbles from 10 to 58, and 80
    CHECK(captures.front().index == 10);
    CHECK(captures.back().index == 80);
  }
  SUBCASE("with hysteresis 0.1 only real crossings fire") {
    Trigger trigger = make(TriggerMode::rising, 0.5, 0.1, 2, 1);
    const auto captures = run(trigger, x, 16);
    CHECK(indices(captures) == std::vector<std::uint64_t>{10, 80});
  }
}

TEST_CASE("hold-off suppresses triggers inside it and a capture suppresses triggers during it") {
  const std::uint32_t pre = 10, post = 50;
  const std::uint64_t holdoff = 100;
  // 200: fires; 230: inside the capture; 300: inside hold-off (ends at 200 + 50 + 100 = 350);
  // 350: first sample after it; 500: free.
  const std::vector<double> x = pulses(700, {200, 230, 300, 350, 500}, 5);
  Trigger trigger = make(TriggerMode::rising, 0.5, 0.0, pre, post, holdoff);
  const auto captures = run(trigger, x, 64);
  CHECK(indices(captures) == std::vector<std::uint64_t>{200, 350, 500});
  CHECK(trigger.counters().suppressed == 2);
}

TEST_CASE("falling and both-edge modes fire where the signal crosses downwards") {
  const std::vector<double> x = pulses(1000, {100, 400}, 50);
  SUBCASE("falling") {
    Trigger trigger = make(TriggerMode::falling, 0.5, 0.1, 4, 8);
    const auto captures = run(trigger, x, 33);
    CHECK(indices(captures) == std::vector<std::uint64_t>{150, 450});
    for (const auto& c : captures) {
      CHECK_FALSE(c.rising);
      CHECK(c.samples[3] > 0.9F);   // the last pre sample is still high
      CHECK(c.samples[4] < 0.01F);  // the trigger sample is the first low one
    }
  }
  SUBCASE("both") {
    Trigger trigger = make(TriggerMode::both, 0.5, 0.1, 4, 8);
    const auto captures = run(trigger, x, 33);
    REQUIRE(indices(captures) == std::vector<std::uint64_t>{100, 150, 400, 450});
    CHECK(captures[0].rising);
    CHECK_FALSE(captures[1].rising);
    CHECK(captures[2].rising);
    CHECK_FALSE(captures[3].rising);
  }
}

TEST_CASE("level mode fires on a signal that is already above the level, then needs it to drop") {
  std::vector<double> x(300, 1.0);
  for (std::size_t i = 100; i < 150; ++i) x[i] = 0.0;
  SUBCASE("level: no edge needed") {
    Trigger trigger = make(TriggerMode::level, 0.5, 0.1, 0, 10);
    CHECK(indices(run(trigger, x, 50)) == std::vector<std::uint64_t>{0, 150});
  }
  SUBCASE("rising: the first sample is no edge") {
    Trigger trigger = make(TriggerMode::rising, 0.5, 0.1, 0, 10);
    CHECK(indices(run(trigger, x, 50)) == std::vector<std::uint64_t>{150});
  }
}

TEST_CASE("a trigger before `pre` samples of history is suppressed, and post = 0 captures only the past") {
  const std::vector<double> x = pulses(400, {5, 200}, 10);
  Trigger trigger = make(TriggerMode::rising, 0.5, 0.0, 20, 0);
  const auto captures = run(trigger, x, 64);
  REQUIRE(indices(captures) == std::vector<std::uint64_t>{200});
  CHECK(trigger.counters().suppressed == 1);
  REQUIRE(captures[0].samples.size() == 20);
  for (std::size_t i = 0; i < 20; ++i) CHECK(captures[0].samples[i] == static_cast<float>(x[180 + i]));
}

TEST_CASE("a gap in the stream aborts the capture in progress and clears the history") {
  const std::vector<double> x = pulses(600, {90, 330, 400}, 10);
  Trigger trigger = make(TriggerMode::rising, 0.5, 0.0, 20, 50);
  std::vector<Captured> captures;
  // Samples 0..99, then a jump to 300: the capture from 90 cannot complete.
  const std::vector<double> first(x.begin(), x.begin() + 100);
  const std::vector<double> second(x.begin() + 300, x.end());
  captures = run(trigger, first, 100, 0);
  CHECK(captures.empty());
  captures = run(trigger, second, 100, 300);
  // 330 has only 30 samples of history since the gap: 20 needed, so it fires; check the pre samples
  // come from after the gap.
  REQUIRE(indices(captures) == std::vector<std::uint64_t>{330, 400});
  for (std::size_t i = 0; i < 20; ++i) CHECK(captures[0].samples[i] == static_cast<float>(x[310 + i]));
  CHECK(trigger.counters().aborted == 1);
  CHECK(trigger.counters().gaps == 1);
}

TEST_CASE("inconsistent trigger settings are refused with the field and value") {
  TriggerConfig c;
  c.rate_hz = kRate;
  c.pre = 0;
  c.post = 0;
  auto t = Trigger::create(c);
  REQUIRE_FALSE(t);
  CHECK(t.error().what.find("pre + post = 0") != std::string::npos);
  c.post = 1;
  c.hysteresis = -0.5;
  t = Trigger::create(c);
  REQUIRE_FALSE(t);
  CHECK(t.error().what.find("hysteresis = -0.5") != std::string::npos);
  CHECK_FALSE(parse_trigger_mode("sideways"));
  CHECK(parse_trigger_mode("both").value() == TriggerMode::both);
}

}  // TEST_SUITE

// The file-writer's gate on its own, on two arenas in this process: a staging channel of data and
// gap blocks, and the run's window [start, stop). Exactly the data blocks whose first-sample time is
// in the window reach the run's channel, in order and unchanged; a gap block is placed one block
// period after the block before it (or, before any data block, before the block after it) and goes
// in as a gap of its reason when that time is in the window.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "channel_events.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/gap_reason.hpp"
#include "weir/kafka_file_writer/run_gate.hpp"

namespace weir::test {

namespace {

using kafka::fw::GateCounts;
using kafka::fw::kOpenStop;
using kafka::fw::RunGate;
using kafka::fw::RunWindow;

constexpr std::uint32_t kSamples = 100;
constexpr double kRateHz = 1e3;
constexpr std::int64_t kBlockNs = 100'000'000;              // kSamples at kRateHz
constexpr std::int64_t kT0 = 1'600'000'000'000'000'000;     // the time of data block 0 (ns since the epoch)

core::Arena memfd_arena(const std::string& name) {
  auto arena = core::Arena::create("memfd:" + name);
  REQUIRE_MESSAGE(arena, (arena ? std::string() : arena.error().what));
  return std::move(*arena);
}

// A staging channel "adc0" (f32, kSamples a block at kRateHz) and its writer.
core::ChannelWriter staging_channel(const core::Arena& staging) {
  core::ChannelSpec spec;
  spec.name = "adc0";
  spec.rate_hz = kRateHz;
  spec.units = "V";
  spec.samples_per_block = kSamples;
  spec.ring_blocks = 64;
  REQUIRE(core::create_channel(staging, spec));
  auto writer = core::ChannelWriter::open(staging, "adc0");
  REQUIRE(writer);
  return std::move(*writer);
}

// Data block `i`: at kT0 + i block periods, every sample the value i.
void publish_block(core::ChannelWriter& w, std::int64_t i) {
  std::span<std::byte> slot;
  REQUIRE(w.claim(slot) == core::ClaimStatus::ok);
  const auto value = static_cast<float>(i);
  for (std::uint32_t s = 0; s < kSamples; ++s) std::memcpy(slot.data() + s * sizeof value, &value, sizeof value);
  w.publish(kSamples, static_cast<std::uint64_t>(kT0 + i * kBlockNs), 1);
}

// What the run's channel holds, in order: a data block as its index i (the value of its samples),
// a gap block as -1 with its reason.
struct RunBlock {
  std::int64_t index = 0;      // -1: a gap block
  core::GapReason reason{};    // a gap block's
  bool samples_ok = false;     // a data block's kSamples samples are all its index
};

std::vector<RunBlock> read_run(const core::Arena& run) {
  std::vector<RunBlock> out;
  for (const ChannelEvent& e : read_events(run, "adc0")) {
    if (e.gap) {
      out.push_back({-1, e.reason, false});
      continue;
    }
    RunBlock b;
    b.index = e.samples.empty() ? -2 : static_cast<std::int64_t>(e.samples[0]);
    b.samples_ok = e.samples.size() == kSamples &&
                   std::all_of(e.samples.begin(), e.samples.end(),
                               [&](double v) { return v == static_cast<double>(b.index); });
    out.push_back(b);
  }
  return out;
}

// Steps the gate until staging has nothing more; returns the blocks it moved.
int drain(RunGate& gate, const RunWindow& window) {
  int moved = 0;
  while (gate.step(window)) ++moved;
  return moved;
}

// Data blocks from..to-1 as expected run blocks.
void expect_data(std::vector<RunBlock>& out, std::int64_t from, std::int64_t to) {
  for (std::int64_t i = from; i < to; ++i) out.push_back({i, {}, true});
}

void check_run(const std::vector<RunBlock>& got, const std::vector<RunBlock>& expected) {
  REQUIRE(got.size() == expected.size());
  for (std::size_t k = 0; k < got.size(); ++k) {
    CAPTURE(k);
    CHECK(got[k].index == expected[k].index);
    if (expected[k].index < 0) {
      CHECK(got[k].reason == expected[k].reason);
    } else {
      CHECK(got[k].samples_ok);
    }
  }
}

bool same(const GateCounts& a, const GateCounts& b) {
  return a.copied == b.copied && a.gap_blocks == b.gap_blocks && a.before == b.before && a.after == b.after &&
         a.unplaced == b.unplaced && a.dropped == b.dropped;
}

doctest::String counts_text(const GateCounts& c) {
  return ("copied " + std::to_string(c.copied) + ", gap_blocks " + std::to_string(c.gap_blocks) + ", before " +
          std::to_string(c.before) + ", after " + std::to_string(c.after) + ", unplaced " + std::to_string(c.unplaced) +
          ", dropped " + std::to_string(c.dropped))
      .c_str();
}

}  // namespace

TEST_SUITE("kafka.file_writer.run_gate") {

TEST_CASE("exactly the blocks whose first-sample time is from the start up to the stop reach the run, gaps placed by the data around them") {
  const core::Arena staging = memfd_arena("gate-staging");
  const core::Arena run = memfd_arena("gate-run");
  core::ChannelWriter w = staging_channel(staging);
  // Staging: 2 gap blocks before any data (placed at -2 and -1), data 0..9, 3 gap blocks (placed at
  // 10, 11, 12), data 13..19, 2 gap blocks (20, 21), data 22..24.
  w.skip(2, core::GapReason::source_loss);
  for (std::int64_t i = 0; i < 10; ++i) publish_block(w, i);
  w.skip(3, core::GapReason::sink_overflow);
  for (std::int64_t i = 13; i < 20; ++i) publish_block(w, i);
  w.skip(2, core::GapReason::late);
  for (std::int64_t i = 22; i < 25; ++i) publish_block(w, i);

  auto gate = RunGate::open(staging, run, "adc0", "writer:gate-test");
  REQUIRE_MESSAGE(gate, (gate ? std::string() : gate.error().what));
  CHECK(gate->name() == "adc0");

  SUBCASE("a window from inside data block 1 to gap block 12: the data in it, then the two gap blocks in it") {
    // Block 1 starts at kT0 + kBlockNs: a start 1 ns later leaves it out, as its first sample is before.
    const RunWindow window{kT0 + kBlockNs + 1, kT0 + 12 * kBlockNs};
    CHECK(drain(*gate, window) > 0);
    CHECK(gate->passed_stop());
    gate->finish();
    std::vector<RunBlock> expected;
    expect_data(expected, 2, 10);
    expected.push_back({-1, core::GapReason::sink_overflow, false});
    expected.push_back({-1, core::GapReason::sink_overflow, false});
    check_run(read_run(run), expected);
    // before: the leading 2 gap blocks, data 0 and 1; after: gap 12, data 13..19, gaps 20 and 21, data 22..24.
    const GateCounts want{8, 2, 4, 1 + 7 + 2 + 3, 0, 0};
    CHECK_MESSAGE(same(gate->counts(), want), counts_text(gate->counts()));
  }

  SUBCASE("a window from data block 0 exactly: its start is in, the leading gap blocks before it are not") {
    const RunWindow window{kT0, kT0 + 13 * kBlockNs};
    (void)drain(*gate, window);
    CHECK(gate->passed_stop());
    std::vector<RunBlock> expected;
    expect_data(expected, 0, 10);
    for (int k = 0; k < 3; ++k) expected.push_back({-1, core::GapReason::sink_overflow, false});
    check_run(read_run(run), expected);
    const GateCounts want{10, 3, 2, 7 + 2 + 3, 0, 0};
    CHECK_MESSAGE(same(gate->counts(), want), counts_text(gate->counts()));
  }

  SUBCASE("a window that begins among leading gap blocks takes the gap blocks placed in it") {
    const RunWindow window{kT0 - kBlockNs, kT0 + 2 * kBlockNs};
    (void)drain(*gate, window);
    std::vector<RunBlock> expected;
    expected.push_back({-1, core::GapReason::source_loss, false});
    expect_data(expected, 0, 2);
    check_run(read_run(run), expected);
    const GateCounts want{2, 1, 1, 8 + 3 + 7 + 2 + 3, 0, 0};
    CHECK_MESSAGE(same(gate->counts(), want), counts_text(gate->counts()));
  }

  SUBCASE("an open stop takes everything from the start on, and has not passed its stop") {
    const RunWindow window{kT0 + 15 * kBlockNs, kOpenStop};
    (void)drain(*gate, window);
    CHECK_FALSE(gate->passed_stop());
    std::vector<RunBlock> expected;
    expect_data(expected, 15, 20);
    expected.push_back({-1, core::GapReason::late, false});
    expected.push_back({-1, core::GapReason::late, false});
    expect_data(expected, 22, 25);
    check_run(read_run(run), expected);
    const GateCounts want{8, 2, 2 + 10 + 3 + 2, 0, 0, 0};
    CHECK_MESSAGE(same(gate->counts(), want), counts_text(gate->counts()));
  }
}

TEST_CASE("the window is read at each step: a stop set later ends the run at the first block at or after it") {
  const core::Arena staging = memfd_arena("gate-staging-late-stop");
  const core::Arena run = memfd_arena("gate-run-late-stop");
  core::ChannelWriter w = staging_channel(staging);
  for (std::int64_t i = 0; i < 5; ++i) publish_block(w, i);
  auto gate = RunGate::open(staging, run, "adc0", "writer:gate-test");
  REQUIRE(gate);
  CHECK(drain(*gate, RunWindow{kT0, kOpenStop}) == 5);
  CHECK_FALSE(gate->passed_stop());
  CHECK_FALSE(gate->step(RunWindow{kT0, kOpenStop}));  // nothing waiting
  for (std::int64_t i = 5; i < 10; ++i) publish_block(w, i);
  CHECK(drain(*gate, RunWindow{kT0, kT0 + 7 * kBlockNs}) == 5);
  CHECK(gate->passed_stop());
  std::vector<RunBlock> expected;
  expect_data(expected, 0, 7);
  check_run(read_run(run), expected);
  CHECK(gate->counts().copied == 7);
  CHECK(gate->counts().after == 3);
}

TEST_CASE("gap blocks with no data block to place them by are counted unplaced when the run ends") {
  const core::Arena staging = memfd_arena("gate-staging-unplaced");
  const core::Arena run = memfd_arena("gate-run-unplaced");
  core::ChannelWriter w = staging_channel(staging);
  w.skip(4, core::GapReason::source_loss);
  auto gate = RunGate::open(staging, run, "adc0", "writer:gate-test");
  REQUIRE(gate);
  (void)drain(*gate, RunWindow{kT0, kOpenStop});
  CHECK(gate->counts().unplaced == 0);  // still waiting for a data block
  gate->finish();
  const GateCounts want{0, 0, 0, 0, 4, 0};
  CHECK_MESSAGE(same(gate->counts(), want), counts_text(gate->counts()));
  CHECK(read_run(run).empty());
}

TEST_CASE("a gate for a channel the staging arena does not have is refused naming it") {
  const core::Arena staging = memfd_arena("gate-staging-missing");
  const core::Arena run = memfd_arena("gate-run-missing");
  auto gate = RunGate::open(staging, run, "nosuch", "writer:gate-test");
  REQUIRE_FALSE(gate);
  CHECK(gate.error().code == core::Errc::not_found);
  CHECK(gate.error().what.find("'nosuch'") != std::string::npos);
}

}  // TEST_SUITE

}  // namespace weir::test

#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "arena_guard.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/channel_activity.hpp"
#include "weir/core/gap_reason.hpp"

using namespace weir::core;
using weir::test::ArenaGuard;
using weir::test::unique_name;

namespace {

constexpr std::uint32_t kBlock = 100;      // samples per block
constexpr std::uint32_t kRing = 32;        // blocks in the ring
constexpr std::uint64_t kPeriodNs = 1'000'000;  // one block a millisecond: 100 kS/s
constexpr std::uint64_t kStartNs = 5'000'000'000;

struct Fixture {
  Fixture() : guard(unique_name("activity")), arena(std::move(Arena::create(guard.where(), options()).value())) {
    ChannelSpec s;
    s.name = "adc";
    s.dtype = Dtype::f32;
    s.rate_hz = 1e5;
    s.samples_per_block = kBlock;
    s.ring_blocks = kRing;
    REQUIRE(create_channel(arena, s).has_value());
  }
  static ArenaOptions options() {
    ArenaOptions o;
    o.slot_count = 64;
    o.value_bytes = 64;
    o.vector_dim = 0;
    o.channel_capacity = 1;
    o.channel_data_bytes = 1ULL << 20;
    return o;
  }
  // Publishes n full blocks, one per period from the last stamp on.
  void write(ChannelWriter& w, std::uint64_t n) {
    for (std::uint64_t i = 0; i < n; ++i) {
      std::span<std::byte> out;
      REQUIRE(w.claim(out) == ClaimStatus::ok);
      std::memset(out.data(), 0, out.size());
      stamp += kPeriodNs;
      w.publish(kBlock, 1'700'000'000'000'000'000ULL + stamp, stamp, 0);
    }
  }
  ArenaGuard guard;
  Arena arena;
  std::uint64_t stamp = kStartNs;
};

}  // namespace

TEST_SUITE("core.channel_activity") {

TEST_CASE("an unwritten channel is not known; one block gives its age but no rate") {
  Fixture f;
  auto copier = BlockCopier::open(f.arena, "adc").value();
  CHECK_FALSE(channel_activity(copier, static_cast<std::int64_t>(kStartNs)).known);
  auto w = ChannelWriter::open(f.arena, "adc").value();
  f.write(w, 1);
  const ChannelActivity a = channel_activity(copier, static_cast<std::int64_t>(f.stamp + 250'000'000));
  CHECK(a.known);
  CHECK(a.newest_sequence == 0);
  CHECK(a.age_s == doctest::Approx(0.25));
  CHECK(a.blocks_per_s == 0);
  CHECK(a.window_blocks == 0);
}

TEST_CASE("the rate comes from the blocks' own stamps at the first look, over at most half the ring") {
  Fixture f;
  auto copier = BlockCopier::open(f.arena, "adc").value();
  auto w = ChannelWriter::open(f.arena, "adc").value();
  f.write(w, 200);  // the ring has lapped several times
  const ChannelActivity a = channel_activity(copier, static_cast<std::int64_t>(f.stamp + kPeriodNs / 2));
  REQUIRE(a.known);
  CHECK(a.newest_sequence == 199);
  CHECK(a.window_blocks == kRing / 2);
  CHECK(a.blocks_per_s == doctest::Approx(1000.0));
  CHECK(a.samples_per_s == doctest::Approx(1e5));
  CHECK(a.age_s == doctest::Approx(0.0005));
  const ChannelActivity narrow = channel_activity(copier, static_cast<std::int64_t>(f.stamp), 4);
  CHECK(narrow.window_blocks == 4);
  CHECK(narrow.window_s == doctest::Approx(0.004));
}

TEST_CASE("a stalled writer's rate decays with the time since its newest block") {
  Fixture f;
  auto copier = BlockCopier::open(f.arena, "adc").value();
  auto w = ChannelWriter::open(f.arena, "adc").value();
  f.write(w, 17);  // 16 periods between the oldest and the newest of the window
  const ChannelActivity late = channel_activity(copier, static_cast<std::int64_t>(f.stamp + 485 * kPeriodNs));
  REQUIRE(late.known);
  CHECK(late.window_s == doctest::Approx(0.5));  // 16 ms of blocks, then 484 ms past the newest's publication
  CHECK(late.blocks_per_s == doctest::Approx(32.0));
  CHECK(late.age_s == doctest::Approx(0.485));
  // A block is published a period after its stamp, and a loaded machine schedules late: 200 ms
  // without a block at 1000 blocks/s is within the slack, not a stall.
  const ChannelActivity slack = channel_activity(copier, static_cast<std::int64_t>(f.stamp + 200 * kPeriodNs));
  CHECK(slack.blocks_per_s == doctest::Approx(1000.0));
}

TEST_CASE("gap blocks carry no time: the newest data block before them gives the age and the rate") {
  Fixture f;
  auto copier = BlockCopier::open(f.arena, "adc").value();
  auto w = ChannelWriter::open(f.arena, "adc").value();
  f.write(w, 10);
  w.skip(3, GapReason::source_loss);
  const ChannelActivity a = channel_activity(copier, static_cast<std::int64_t>(f.stamp + kPeriodNs));
  REQUIRE(a.known);
  CHECK(a.newest_sequence == 9);
  CHECK(a.age_s == doctest::Approx(0.001));
  CHECK(a.window_blocks == 9);
  CHECK(a.samples_per_s == doctest::Approx(1e5));
  w.skip(kRing, GapReason::source_loss);  // nothing but gaps in the newest half of the ring
  CHECK_FALSE(channel_activity(copier, static_cast<std::int64_t>(f.stamp)).known);
}

}  // TEST_SUITE

// The channel report `weir ls` and `weir serve` share (weir/tools/channel_report.hpp), on a real
// arena: channels written with chosen block stamps, a registered consumer, a framed channel.
#include <doctest/doctest.h>

#include <cstdint>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "arena_guard.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/clock.hpp"
#include "weir/tools/channel_report.hpp"

using namespace weir;
using weir::tools::ChannelRow;

namespace {

constexpr std::int64_t kStaleAgeNs = 10 * core::kNsPerSecond;  // far past the 2 s floor

core::Arena make_arena() {
  core::ArenaOptions o;
  o.slot_count = 64;
  o.value_bytes = 64;
  o.vector_dim = 0;
  o.channel_capacity = 4;
  o.channel_data_bytes = 4ULL << 20;
  auto arena = core::Arena::create("memfd:" + test::unique_name("chreport"), o);
  REQUIRE(arena.has_value());
  return std::move(*arena);
}

core::ChannelSpec spec(const std::string& name, double rate_hz = 1e6, std::uint32_t block = 256) {
  core::ChannelSpec s;
  s.name = name;
  s.rate_hz = rate_hz;
  s.units = "V";
  s.samples_per_block = block;
  s.ring_blocks = 8;
  return s;
}

// Publishes `blocks` full blocks stamped `age_ns` ago, one microsecond apart.
void write_blocks(const core::Arena& arena, const std::string& name, int blocks, std::int64_t age_ns) {
  auto w = core::ChannelWriter::open(arena, name);
  REQUIRE(w.has_value());
  const std::int64_t newest = core::monotonic_ns() - age_ns;
  for (int i = 0; i < blocks; ++i) {
    std::span<std::byte> out;
    REQUIRE(w->claim(out) == core::ClaimStatus::ok);
    const auto stamp = static_cast<std::uint64_t>(newest - (blocks - 1 - i) * 1000);
    w->publish(w->samples_per_block(), static_cast<std::uint64_t>(core::realtime_ns()), stamp);
  }
}

const ChannelRow& row_of(const std::vector<ChannelRow>& rows, const std::string& name) {
  for (const ChannelRow& r : rows)
    if (r.info.name == name) return r;
  FAIL("no channel " << name);
  return rows.front();
}

}  // namespace

TEST_SUITE("tools.channel_report") {

TEST_CASE("look_channels lists every channel with its activity, and marks a stalled writer") {
  core::Arena arena = make_arena();
  REQUIRE(core::create_channel(arena, spec("fresh")));
  REQUIRE(core::create_channel(arena, spec("old")));
  REQUIRE(core::create_channel(arena, spec("empty")));
  write_blocks(arena, "fresh", 4, 0);
  write_blocks(arena, "old", 4, kStaleAgeNs);
  auto reader = core::ChannelReader::open(arena, "fresh", core::ConsumerPolicy::lossy, "follower");
  REQUIRE(reader.has_value());

  const std::vector<ChannelRow> rows = tools::look_channels(arena);
  REQUIRE(rows.size() == 3);
  const ChannelRow& fresh = row_of(rows, "fresh");
  CHECK(fresh.info.blocks_written == 4);
  CHECK(fresh.activity.known);
  CHECK(fresh.activity.blocks_per_s > 0);
  CHECK_FALSE(tools::stalled(fresh));
  const ChannelRow& old = row_of(rows, "old");
  CHECK(old.activity.known);
  CHECK(old.activity.age_s >= 10.0);
  CHECK(tools::stalled(old));
  const ChannelRow& empty = row_of(rows, "empty");
  CHECK_FALSE(empty.activity.known);
  CHECK_FALSE(tools::stalled(empty));  // no block yet: nothing to call stalled

  const auto json = nlohmann::json::parse(tools::channel_json(fresh));
  CHECK(json["name"] == "fresh");
  CHECK(json["dtype"] == "f32");
  CHECK(json["samples_per_block"] == 256);
  CHECK(json["blocks_written"] == 4);
  CHECK(json["stalled"] == false);
  CHECK(json["newest_block_age_s"].is_number());
  CHECK(json["frame"].is_null());
  REQUIRE(json["consumers"].size() == 1);
  CHECK(json["consumers"][0]["name"] == "follower");
  CHECK(json["consumers"][0]["policy"] == "lossy");
  CHECK(json["consumers"][0]["alive"] == true);
  CHECK(nlohmann::json::parse(tools::channel_json(old))["stalled"] == true);
  CHECK(nlohmann::json::parse(tools::channel_json(empty))["newest_block_age_s"].is_null());
}

TEST_CASE("a writer stalls after 2 s or four block periods, whichever is longer, unless told") {
  core::ChannelInfo c;
  c.rate_hz = 1e6;
  c.samples_per_block = 256;
  CHECK(tools::stall_after_s(c) == doctest::Approx(2.0));  // 256 us blocks: the 2 s floor
  c.rate_hz = 100;
  c.samples_per_block = 1000;
  CHECK(tools::stall_after_s(c) == doctest::Approx(40.0));  // four 10 s blocks
  CHECK(tools::stall_after_s(c, 0.5) == doctest::Approx(0.5));  // a timeout given wins
  c.rate_hz = 0;
  CHECK(tools::stall_after_s(c) == doctest::Approx(2.0));  // no nominal rate: the floor
}

TEST_CASE("a framed channel's shape reads as JSON and as text") {
  core::FrameShape f;
  CHECK(tools::frame_json(f) == "null");
  f.frames_per_block = 1;
  f.frame_elements = 2049;
  f.axis.name = "frequency";
  f.axis.units = "Hz";
  f.axis.start = 0;
  f.axis.step = 30.5;
  CHECK(tools::frame_text(f) == "frames 1 x 2049 frequency [Hz] 0 + 30.5/bin");
  auto json = nlohmann::json::parse(tools::frame_json(f));
  CHECK(json["frames_per_block"] == 1);
  CHECK(json["frame_elements"] == 2049);
  CHECK(json["axis"]["name"] == "frequency");
  CHECK(json["axis"]["step"] == 30.5);
  CHECK_FALSE(json["axis"].contains("values_key"));
  f.axis.values_key = "psd.freqs";
  f.axis.name.clear();
  CHECK(tools::frame_text(f) == "frames 1 x 2049 index [Hz] from key psd.freqs");
  CHECK(nlohmann::json::parse(tools::frame_json(f))["axis"]["values_key"] == "psd.freqs");
}

}  // TEST_SUITE

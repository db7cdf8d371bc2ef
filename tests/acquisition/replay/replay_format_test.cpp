// What the recorder really leaves behind: a killed recorder's tables of different lengths and
// unwritten rows, escaped group names, blocks dropped at the source, and a run whose arena was
// re-created between two files.
#include <doctest/doctest.h>

#include "proc_util.hpp"
#include "replay_fixture.hpp"
#include "scratch_dir.hpp"

using namespace weir;
using namespace weir::test;

TEST_SUITE("acquisition.replay") {

TEST_CASE("a killed recorder's file replays the rows every table holds, up to the first unwritten row") {
  ScratchDir dir("replay-killed");
  RecFileOptions short_table, unwritten;
  short_table.short_offsets = true;  // block_offset lost its last row
  unwritten.unwritten_rows = true;   // a row extended but never written, in every table
  write_recording(dir.file("short.h5"), {u32_channel("adc0", {{0, 4}}, 0)}, short_table);
  write_recording(dir.file("unwritten.h5"), {u32_channel("adc1", {{0, 4}}, 0)}, unwritten);
  ArenaGuard guard(unique_name("replay-killed"));
  auto arena = core::Arena::create(guard.where(), replay_arena());
  REQUIRE(arena);
  acq::ReplayOptions options;
  options.speed = 0;
  const acq::ReplayReport shortened = replay(*arena, {dir.file("short.h5")}, options);
  REQUIRE(shortened.channels.size() == 1);
  CHECK(shortened.channels[0].blocks_published == 3);
  const acq::ReplayReport filled = replay(*arena, {dir.file("unwritten.h5")}, options);
  REQUIRE(filled.channels.size() == 1);
  CHECK(filled.channels[0].blocks_published == 4);
  CHECK(filled.channels[0].gaps == 0);  // the unwritten gap row is no gap
  for (const auto& [channel, blocks] : {std::pair{"adc0", 3U}, std::pair{"adc1", 4U}}) {
    const ReadBack back = read_back(*arena, channel);
    REQUIRE(back.blocks.size() == blocks);
    for (std::size_t i = 0; i < blocks; ++i) CHECK(u32_block_ok(back.blocks[i], i));
    CHECK(back.lost() == 0);
  }
}

TEST_CASE("a format 1.0 recording (fixed-length stop_time and first_sample_time) still replays") {
  ScratchDir dir("replay-format10");
  RecFileOptions old;
  old.format = "weir-recording 1";
  old.fixed_strings = true;
  write_recording(dir.file("old.h5"), {u32_channel("adc0", {{0, 4}}, 0)}, old);
  ArenaGuard guard(unique_name("replay-format10"));
  auto arena = core::Arena::create(guard.where(), replay_arena());
  REQUIRE(arena);
  acq::ReplayOptions options;
  options.speed = 0;
  const acq::ReplayReport report = replay(*arena, {dir.file("old.h5")}, options);
  REQUIRE(report.channels.size() == 1);
  CHECK(report.channels[0].blocks_published == 4);
  const ReadBack back = read_back(*arena, "adc0");
  REQUIRE(back.blocks.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) CHECK(u32_block_ok(back.blocks[i], i));

  RecFileOptions future;
  future.format = "weir-recording 3";
  write_recording(dir.file("future.h5"), {u32_channel("adc0", {{0, 4}}, 0)}, future);
  auto refused = acq::open_recording(std::vector<std::string>{dir.file("future.h5")});
  REQUIRE_FALSE(refused);
  CHECK(refused.error().what.find("recording format 3; this build reads formats 1 to 2") != std::string::npos);
}

TEST_CASE("a channel replays under the name its group's channel attribute holds, not the escaped group name") {
  ScratchDir dir("replay-names");
  RecChannel c = u32_channel("rack/adc0", {{0, 4}}, 0);
  c.link = "rack%2Fadc0";
  write_recording(dir.file("run.h5"), {c});
  ArenaGuard guard(unique_name("replay-names"));
  auto arena = core::Arena::create(guard.where(), replay_arena());
  REQUIRE(arena);
  acq::ReplayOptions options;
  options.speed = 0;
  options.channels = {"rack/*"};
  const acq::ReplayReport report = replay(*arena, {dir.file("run.h5")}, options);
  REQUIRE(report.channels.size() == 1);
  CHECK(report.channels[0].name == "rack/adc0");
  CHECK(read_back(*arena, "rack/adc0").blocks.size() == 4);
}

TEST_CASE("blocks dropped at the source while recording are reported, not replayed as lost sequence numbers") {
  ScratchDir dir("replay-drops");
  RecChannel c = u32_channel("adc0", {{0, 8}}, 0);
  c.gaps = {RecGap{4, 3, 1, kRealtime0 + 4'000'000}};  // dropped_at_source: no jump in block_sequence
  write_recording(dir.file("run.h5"), {c});
  ArenaGuard guard(unique_name("replay-drops"));
  auto arena = core::Arena::create(guard.where(), replay_arena());
  REQUIRE(arena);
  acq::ReplayOptions options;
  options.speed = 0;
  const acq::ReplayReport report = replay(*arena, {dir.file("run.h5")}, options);
  REQUIRE(report.channels.size() == 1);
  CHECK(report.channels[0].recorded_drops == 3);
  CHECK(report.channels[0].blocks_missing == 0);
  const ReadBack back = read_back(*arena, "adc0");
  CHECK(back.blocks.size() == 8);
  CHECK(back.lost() == 0);
}

TEST_CASE("a run whose arena was re-created between files starts its sequences afresh, other runs are refused") {
  ScratchDir dir("replay-recreated");
  RecFileOptions before, after;
  before.arena_created_ns = 1000;
  after.arena_created_ns = 2000;
  after.segment = 1;
  write_recording(dir.file("run_0000.h5"), {u32_channel("adc0", {{0, 5}}, 0)}, before);
  write_recording(dir.file("run_0001.h5"), {u32_channel("adc0", {{0, 5}}, 0)}, after);
  ArenaGuard guard(unique_name("replay-recreated"));
  auto arena = core::Arena::create(guard.where(), replay_arena());
  REQUIRE(arena);
  acq::ReplayOptions options;
  options.speed = 0;
  const acq::ReplayReport report = replay(*arena, {dir.file("run_0000.h5"), dir.file("run_0001.h5")}, options);
  CHECK(report.blocks_published == 10);
  CHECK(report.blocks_missing == 0);

  write_recording(dir.file("same_0001.h5"), {u32_channel("adc0", {{0, 5}}, 0)}, before);
  auto refused = acq::open_recording(std::vector<std::string>{dir.file("run_0000.h5"), dir.file("same_0001.h5")});
  REQUIRE_FALSE(refused);
  CHECK(refused.error().what.find("does not follow") != std::string::npos);
}

}  // TEST_SUITE

// Replay timing and channels: paced replay keeps the recorded time and spacing, max speed is
// faster, patterns choose channels, every dtype path reads back what was recorded, stop stops.
#include <doctest/doctest.h>

#include <thread>

#include "proc_util.hpp"
#include "replay_fixture.hpp"
#include "scratch_dir.hpp"

using namespace weir;
using namespace weir::test;

namespace {

constexpr std::uint64_t kBlockNs = 25'000'000;  // 256 samples at 10240 Hz

// 40 blocks of 25 ms: one second of recording.
RecChannel second_of_f32() {
  RecChannel c;
  c.name = "scope";
  c.dtype = "f32";
  c.rate_hz = 10240;
  c.units = "V";
  c.labels = "probe";
  c.samples_per_block = 256;
  c.blocks = rec_blocks(0, 40, 256, kRealtime0, kMonotonic0, kBlockNs);
  return c;
}

}  // namespace

TEST_SUITE("acquisition.replay") {

TEST_CASE("paced replay takes the recorded time with the recorded spacing, and max speed is faster" *
          doctest::timeout(30)) {
  ScratchDir dir("replay-timing");
  write_recording(dir.file("run.h5"), {second_of_f32()});
  ArenaGuard guard(unique_name("replay-timing"));
  auto arena = core::Arena::create(guard.where(), replay_arena());
  REQUIRE(arena);

  acq::ReplayOptions paced;
  paced.speed = 1.0;
  const acq::ReplayReport real_time = replay(*arena, {dir.file("run.h5")}, paced);
  CHECK(real_time.recorded_s == doctest::Approx(1.0));
  CHECK(real_time.elapsed_s >= 0.9);
  CHECK(real_time.elapsed_s <= 1.1);
  REQUIRE(real_time.channels.size() == 1);
  CHECK(real_time.channels[0].created);
  CHECK(real_time.channels[0].blocks_published == 40);
  MESSAGE("speed 1: " << real_time.elapsed_s << " s for " << real_time.recorded_s << " s recorded, max lateness "
                      << real_time.max_lateness_ns << " ns");

  const ReadBack back = read_back(*arena, "scope");
  REQUIRE(back.blocks.size() == 40);
  for (std::size_t i = 0; i < back.blocks.size(); ++i) {
    const ReadBlock& b = back.blocks[i];
    CHECK(b.realtime_ns == kRealtime0 + i * kBlockNs);
    CHECK(b.flags == i % 7);
    if (i > 0) CHECK(b.monotonic_ns - back.blocks[i - 1].monotonic_ns == kBlockNs);  // the recorded spacing
    float last = 0;
    std::memcpy(&last, b.data.data() + 255 * sizeof(float), sizeof(float));
    CHECK(last == f32_sample(i, 255));
  }
  const auto info = core::list_channels(*arena);
  REQUIRE(info.size() == 1);
  CHECK(info[0].units == "V");
  CHECK(info[0].rate_hz == 10240);
  CHECK(info[0].samples_per_block == 256);

  acq::ReplayOptions fourfold;
  fourfold.speed = 4.0;
  const acq::ReplayReport quick = replay(*arena, {dir.file("run.h5")}, fourfold);
  CHECK_FALSE(quick.channels[0].created);  // the second time it attaches to the channel it made
  CHECK(quick.elapsed_s >= 0.225);
  CHECK(quick.elapsed_s <= 0.275);

  acq::ReplayOptions flat_out;
  flat_out.speed = 0;
  const acq::ReplayReport fastest = replay(*arena, {dir.file("run.h5")}, flat_out);
  CHECK(fastest.blocks_published == 40);
  CHECK(fastest.elapsed_s < 0.2);
  MESSAGE("speed 4: " << quick.elapsed_s << " s; max: " << fastest.elapsed_s << " s");
}

TEST_CASE("setting stop ends a paced replay early and it says so") {
  ScratchDir dir("replay-stop");
  write_recording(dir.file("run.h5"), {second_of_f32()});
  ArenaGuard guard(unique_name("replay-stop"));
  auto arena = core::Arena::create(guard.where(), replay_arena());
  REQUIRE(arena);
  auto recording = acq::open_recording(std::vector<std::string>{dir.file("run.h5")});
  REQUIRE(recording);
  std::atomic<bool> stop{false};
  std::thread stopper([&stop] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stop.store(true);
  });
  auto report = acq::run_replay(*arena, *recording, acq::ReplayOptions{}, stop);
  stopper.join();
  REQUIRE(report);
  CHECK(report->stopped);
  CHECK(report->elapsed_s < 0.6);
  CHECK(report->blocks_published < 40);
  CHECK(report->loops == 0);
}

TEST_CASE("only the channels matching the patterns are replayed") {
  ScratchDir dir("replay-pick");
  write_recording(dir.file("run.h5"), {u32_channel("adc0", {{0, 4}}, 0), u32_channel("adc1", {{0, 4}}, 0),
                                       u32_channel("dio", {{0, 4}}, 0)});
  ArenaGuard guard(unique_name("replay-pick"));
  auto arena = core::Arena::create(guard.where(), replay_arena());
  REQUIRE(arena);
  acq::ReplayOptions options;
  options.speed = 0;
  options.channels = {"adc[1-9]", "di*"};
  const acq::ReplayReport report = replay(*arena, {dir.file("run.h5")}, options);
  REQUIRE(report.channels.size() == 2);
  CHECK(report.channels[0].name == "adc1");
  CHECK(report.channels[1].name == "dio");
  CHECK_FALSE(core::find_channel(*arena, "adc0"));
  const auto info = core::list_channels(*arena);
  REQUIRE(info.size() == 2);
}

TEST_CASE("complex samples and fixed-length string attributes replay as recorded") {
  ScratchDir dir("replay-c64");
  RecChannel c;
  c.name = "iq";
  c.dtype = "c64";
  c.rate_hz = 1e6;
  c.units = "V";
  c.labels = "rf";
  c.samples_per_block = 32;
  c.blocks = rec_blocks(7, 3, 32, kRealtime0, kMonotonic0, 32'000);
  c.blocks[2].samples = 20;  // a short last block
  RecFileOptions fixed;
  fixed.fixed_strings = true;
  write_recording(dir.file("iq.h5"), {c}, fixed);
  ArenaGuard guard(unique_name("replay-c64"));
  auto arena = core::Arena::create(guard.where(), replay_arena());
  REQUIRE(arena);
  acq::ReplayOptions options;
  options.speed = 0;
  replay(*arena, {dir.file("iq.h5")}, options);
  const ReadBack back = read_back(*arena, "iq");
  REQUIRE(back.blocks.size() == 3);
  CHECK(back.blocks[2].samples == 20);
  for (std::size_t k = 0; k < 3; ++k) {
    for (std::uint32_t i = 0; i < back.blocks[k].samples; ++i) {
      float v[2];
      std::memcpy(v, back.blocks[k].data.data() + std::size_t{i} * 8, 8);
      CHECK(v[0] == static_cast<float>(7 + k));
      CHECK(v[1] == -static_cast<float>(i));
    }
  }
  const auto info = core::list_channels(*arena);
  REQUIRE(info.size() == 1);
  CHECK(info[0].dtype == core::Dtype::c64);
  CHECK(info[0].units == "V");
}

}  // TEST_SUITE

// Replayed gaps: a reader in another process sees the recorded samples, stamps and flags, and
// exactly the recorded gaps as lost blocks, in the places they were lost; across a rotated run's
// files and across the passes of a loop too.
#include <doctest/doctest.h>

#include "proc_util.hpp"
#include "replay_fixture.hpp"
#include "scratch_dir.hpp"

using namespace weir;
using namespace weir::test;

namespace {

constexpr milliseconds kReportTimeout{20'000};

// What the recording below holds, block by block: recorded sequence and the blocks missing before it.
struct Expected {
  std::uint64_t sequence;
  std::uint64_t missing_before;
};

// Blocks 100-109, 113-119, 130-139, with gap rows for 95-99 (before the first block), 110-112,
// 120-129 (longer than the reader's ring) and 140-141 (after the last block).
RecChannel gappy_channel() {
  RecChannel c = u32_channel("adc0", {{100, 10}, {113, 7}, {130, 10}}, 100);
  c.gaps = {RecGap{95, 5, 0, kRealtime0}, RecGap{110, 3, 0, kRealtime0 + 10'000'000},
            RecGap{120, 10, 0, kRealtime0 + 20'000'000}, RecGap{140, 2, 3, kRealtime0 + 40'000'000}};
  return c;
}

std::vector<Expected> expected_blocks(const RecChannel& c) {
  std::vector<Expected> out;
  std::uint64_t previous = 0;
  for (std::size_t i = 0; i < c.blocks.size(); ++i) {
    const std::uint64_t s = c.blocks[i].sequence;
    out.push_back(Expected{s, i == 0 ? 5 : s - previous - 1});
    previous = s;
  }
  return out;
}
constexpr std::uint64_t kMissingAfter = 2;

// The follower: a lossless reader registered before the replay starts. Report: [0] blocks read,
// [1] blocks lost, [2] blocks with wrong samples, [3] wrong realtime stamp or flags, [4] losses in
// the wrong place, [5] losses after the last block.
int follow(const core::Arena& arena, const RecChannel& recorded, ChildLink& link) {
  auto reader = core::ChannelReader::open(arena, "adc0", core::ConsumerPolicy::lossless, "replay-follower",
                                          core::StartAt::sequence, 0);
  if (!reader) return 1;
  link.ready();
  const std::vector<Expected> expected = expected_blocks(recorded);
  const std::uint64_t total = recorded.blocks.size() + 20;
  std::uint64_t pending = 0;
  std::size_t next = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(15);
  while (link.report[0] + link.report[1] < total && Clock::now() < deadline) {
    core::BlockView b;
    std::uint64_t lost = 0;
    const core::NextStatus st = reader->next(b, lost);
    if (st == core::NextStatus::empty) {
      std::this_thread::yield();
      continue;
    }
    if (st == core::NextStatus::lost) {
      link.report[1] += lost;
      pending += lost;
      continue;
    }
    if (next >= expected.size()) return 2;
    const Expected& e = expected[next];
    const RecBlock& r = recorded.blocks[next];
    bool samples_ok = b.samples == r.samples;
    for (std::uint32_t i = 0; samples_ok && i < b.samples; ++i) {
      std::uint32_t v = 0;
      std::memcpy(&v, b.data + std::size_t{i} * 4, 4);
      samples_ok = v == u32_sample(e.sequence, i);
    }
    const bool stamps_ok = b.realtime_ns == r.realtime_ns && b.flags == r.flags;
    const bool place_ok = pending == e.missing_before;
    if (!reader->done(b)) return 3;  // a lossless reader's block cannot be overwritten under it
    ++link.report[0];
    link.report[2] += samples_ok ? 0 : 1;
    link.report[3] += stamps_ok ? 0 : 1;
    link.report[4] += place_ok ? 0 : 1;
    pending = 0;
    ++next;
  }
  // The trailing gap arrives after the last block; give it a moment to be published.
  while (pending < kMissingAfter && Clock::now() < deadline) {
    core::BlockView b;
    std::uint64_t lost = 0;
    if (reader->next(b, lost) == core::NextStatus::lost) {
      link.report[1] += lost;
      pending += lost;
    } else {
      std::this_thread::yield();
    }
  }
  link.report[5] = pending;
  return 0;
}

}  // namespace

TEST_SUITE("acquisition.replay") {

TEST_CASE("a lossless reader in another process gets the recorded samples, stamps and flags, and the gaps as losses" *
          doctest::timeout(30)) {
  ScratchDir dir("replay-gaps");
  const RecChannel recorded = gappy_channel();
  write_recording(dir.file("run.h5"), {recorded});
  ArenaGuard guard(unique_name("replay-gaps"));
  auto arena = core::Arena::create(guard.where(), replay_arena());
  REQUIRE(arena);
  core::ChannelSpec spec;  // made beforehand, as recorded, so the reader is in place before the first block
  spec.name = "adc0";
  spec.dtype = core::Dtype::u32;
  spec.rate_hz = 64000;
  spec.samples_per_block = 64;
  spec.ring_blocks = 8;
  spec.wait_timeout_ns = 5'000'000'000;
  REQUIRE(core::create_channel(*arena, spec));

  Child child = Child::spawn([&](ChildLink& link) { return follow(*arena, recorded, link); });
  REQUIRE(child.wait_ready(kReportTimeout));
  acq::ReplayOptions options;
  options.speed = 0;  // as fast as the lossless reader allows
  const acq::ReplayReport report = replay(*arena, {dir.file("run.h5")}, options);
  Report r{};
  REQUIRE(child.read_report(r, kReportTimeout));
  CHECK(child.wait().code == 0);

  REQUIRE(report.channels.size() == 1);
  const acq::ReplayChannelReport& c = report.channels[0];
  CHECK_FALSE(c.created);
  CHECK(c.blocks_published == 27);
  CHECK(c.samples_published == 27 * 64);
  CHECK(c.blocks_dropped == 0);
  CHECK(c.gaps == 4);
  CHECK(c.blocks_missing == 20);
  CHECK(c.gap_row_blocks == 20);

  CHECK(r[0] == 27);  // every recorded block
  CHECK(r[2] == 0);   // with its samples
  CHECK(r[3] == 0);   // its realtime stamp and flags
  CHECK(r[4] == 0);   // and the losses exactly where the recording lost blocks
  CHECK(r[1] == 20);             // every recorded missing block counted lost
  CHECK(r[5] == kMissingAfter);  // the last two after the last block
}

TEST_CASE("a rotated run replays its files in order as one run, with the restart gap between them") {
  ScratchDir dir("replay-rotated");
  RecChannel first = u32_channel("adc0", {{0, 10}}, 0);
  RecChannel second = u32_channel("adc0", {{15, 10}}, 0);
  second.gaps = {RecGap{10, 5, 2, kRealtime0 + 10'000'000}};  // recorder_restart
  RecChannel late;  // appeared while recording: only in the second segment
  late.name = "adc1";
  late.dtype = "f32";
  late.rate_hz = 64000;
  late.samples_per_block = 64;
  late.blocks = rec_blocks(0, 10, 64, kRealtime0 + 15'000'000, kMonotonic0 + 15'000'000, 1'000'000);
  RecFileOptions seg0, seg1;
  seg1.segment = 1;
  write_recording(dir.file("run_0000.h5"), {first}, seg0);
  write_recording(dir.file("run_0001.h5"), {second, late}, seg1);
  ArenaGuard guard(unique_name("replay-rotated"));
  auto arena = core::Arena::create(guard.where(), replay_arena());
  REQUIRE(arena);

  acq::ReplayOptions options;
  options.speed = 0;
  const acq::ReplayReport report = replay(*arena, {dir.file("run_0000.h5"), dir.file("run_0001.h5")}, options);
  REQUIRE(report.channels.size() == 2);
  CHECK(report.channels[0].name == "adc0");
  CHECK(report.channels[0].created);
  CHECK(report.channels[0].blocks_published == 20);
  CHECK(report.channels[0].gaps == 1);
  CHECK(report.channels[0].blocks_missing == 5);
  CHECK(report.channels[1].name == "adc1");
  CHECK(report.channels[1].blocks_published == 10);

  const ReadBack adc0 = read_back(*arena, "adc0");
  REQUIRE(adc0.blocks.size() == 20);
  for (std::size_t i = 0; i < adc0.blocks.size(); ++i) {
    const std::uint64_t recorded_seq = i < 10 ? i : i + 5;
    CHECK(u32_block_ok(adc0.blocks[i], recorded_seq));
    CHECK(adc0.blocks[i].lost_before == (i == 10 ? 5U : 0U));
  }
  const auto info = core::list_channels(*arena);
  REQUIRE(info.size() == 2);
  CHECK(info[1].dtype == core::Dtype::f32);
  CHECK(info[1].samples_written == 640);
}

TEST_CASE("a looped replay goes on with the sequence and moves realtime stamps on by one recorded span a pass") {
  ScratchDir dir("replay-loop");
  write_recording(dir.file("run.h5"), {u32_channel("adc0", {{40, 5}}, 40)});
  ArenaGuard guard(unique_name("replay-loop"));
  auto arena = core::Arena::create(guard.where(), replay_arena());
  REQUIRE(arena);
  acq::ReplayOptions options;
  options.speed = 0;
  options.loop = true;
  options.max_loops = 3;
  const acq::ReplayReport report = replay(*arena, {dir.file("run.h5")}, options);
  CHECK(report.loops == 3);
  CHECK(report.blocks_published == 15);
  CHECK(report.recorded_s == doctest::Approx(0.005));
  const ReadBack back = read_back(*arena, "adc0");
  REQUIRE(back.blocks.size() == 15);
  constexpr std::uint64_t kSpanNs = 5'000'000;  // five 1 ms blocks
  for (std::size_t i = 0; i < back.blocks.size(); ++i) {
    const std::uint64_t pass = i / 5, k = i % 5;
    CHECK(back.blocks[i].sequence == i);
    CHECK(back.blocks[i].realtime_ns == kRealtime0 + k * 1'000'000 + pass * kSpanNs);
    CHECK(u32_block_ok(back.blocks[i], 40 + k));
  }
}

}  // TEST_SUITE

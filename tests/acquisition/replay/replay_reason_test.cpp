// Replayed gaps keep their reasons: the blocks a recording lost are published as gaps under the
// reasons of the gap rows that cover them (source_loss where none does), a block recorded as a gap
// is one again with its reason, and a real `weir record` of the replay writes the same reasons.
#include <doctest/doctest.h>

#ifdef WEIR_CLI_PATH

#include <signal.h>

#include <filesystem>

#include "background_weir.hpp"
#include "live_arena.hpp"
#include "replay_fixture.hpp"
#include "scratch_dir.hpp"
#include "weir/h5/recording.hpp"

using namespace weir;
using namespace weir::test;

namespace {

using core::GapReason;

constexpr auto kWait = std::chrono::milliseconds(10'000);

RecGap row(std::uint64_t sequence, std::uint64_t blocks, GapReason reason) {
  return RecGap{sequence, blocks, static_cast<std::uint8_t>(reason), kRealtime0};
}

// Blocks 100-104, 110-114 and 125-129 (127 recorded as a kernel_drop gap block); gap rows 95-99
// kernel_drop (before the first block), 105-107 late and 108-109 malformed (one jump, two
// reasons), 115-119 timeout (120-124: no row), 130-131 driver_error (after the last block).
RecChannel recorded_channel() {
  RecChannel c = u32_channel("adc0", {{100, 5}, {110, 5}, {125, 5}}, 100);
  RecBlock& flagged = c.blocks[12];
  REQUIRE(flagged.sequence == 127);
  flagged.samples = 0;
  flagged.flags = core::kBlockGapFlag | static_cast<std::uint32_t>(GapReason::kernel_drop);
  c.gaps = {row(95, 5, GapReason::kernel_drop), row(105, 3, GapReason::late), row(108, 2, GapReason::malformed),
            row(115, 5, GapReason::timeout), row(130, 2, GapReason::driver_error)};
  return c;
}

// A run of the replayed channel: data blocks (reason unused) or lost blocks of one reason.
struct Run {
  bool lost = false;
  std::uint64_t blocks = 0;
  GapReason reason = GapReason::lapped;
  bool operator==(const Run&) const = default;
};

// What the replay publishes, from its sequence 0: the recording's runs, gaps under their reasons.
const std::vector<Run> kExpected{
    {true, 5, GapReason::kernel_drop}, {false, 5},
    {true, 3, GapReason::late},        {true, 2, GapReason::malformed}, {false, 5},
    {true, 5, GapReason::timeout},     {true, 5, GapReason::source_loss}, {false, 2},
    {true, 1, GapReason::kernel_drop}, {false, 2},
    {true, 2, GapReason::driver_error}};
constexpr std::uint64_t kTotal = 37;

std::string describe(const std::vector<Run>& runs) {
  std::string out;
  for (const Run& r : runs)
    out += (r.lost ? std::string(core::gap_reason_name(r.reason)) : std::string("data")) + " " +
           std::to_string(r.blocks) + "; ";
  return out;
}

void add(std::vector<Run>& runs, const Run& r) {
  if (!runs.empty() && runs.back().lost == r.lost && (!r.lost || runs.back().reason == r.reason)) {
    runs.back().blocks += r.blocks;
  } else {
    runs.push_back(r);
  }
}

bool recorder_follows(const core::Arena& arena) {
  for (const core::ChannelInfo& c : core::list_channels(arena))
    for (const core::ConsumerInfo& r : c.consumers)
      if (c.name == "adc0" && r.alive && r.kind == "record:hdf5") return true;
  return false;
}

std::uint64_t recorder_cursor(const core::Arena& arena) {
  for (const core::ChannelInfo& c : core::list_channels(arena))
    for (const core::ConsumerInfo& r : c.consumers)
      if (c.name == "adc0" && r.alive && r.kind == "record:hdf5") return r.cursor;
  return 0;
}

}  // namespace

TEST_SUITE("acquisition.replay") {

TEST_CASE("replayed gaps carry the recording's reasons, and a recorder of the replay writes them again" *
          doctest::timeout(60)) {
  ScratchDir dir("replay-reasons");
  write_recording(dir.file("run.h5"), {recorded_channel()});
  ScratchArena arena("replayreason");
  core::ChannelSpec spec;  // made beforehand, as recorded, so the readers are in place before the first block
  spec.name = "adc0";
  spec.dtype = core::Dtype::u32;
  spec.rate_hz = 64000;
  spec.samples_per_block = 64;
  spec.ring_blocks = 64;  // holds the whole replay
  spec.wait_timeout_ns = 5'000'000'000;
  REQUIRE(core::create_channel(arena.arena(), spec));
  const std::filesystem::path out = std::filesystem::path(dir.file("out"));
  BackgroundWeir recorder({"record", arena.name(), "--channels", "adc0", "--out", out.string()});
  REQUIRE_MESSAGE(eventually([&] { return recorder_follows(arena.arena()); }, kWait), recorder.output());
  auto reader = core::ChannelReader::open(arena.arena(), "adc0", core::ConsumerPolicy::lossless, "replay-test",
                                          core::StartAt::sequence, 0);
  REQUIRE(reader);

  acq::ReplayOptions options;
  options.speed = 0;
  const acq::ReplayReport report = replay(arena.arena(), {dir.file("run.h5")}, options);
  REQUIRE(report.channels.size() == 1);
  CHECK(report.channels[0].blocks_published == 14);
  CHECK(report.channels[0].blocks_missing == kTotal - 14);
  CHECK(report.channels[0].gaps == 5);  // before, two jumps, the flagged block, after

  // A reader of the replayed channel meets the gaps with their reasons.
  std::vector<Run> read;
  for (;;) {
    core::BlockView b;
    std::uint64_t lost = 0;
    const core::NextStatus st = reader->next(b, lost);
    if (st == core::NextStatus::empty) break;
    if (st == core::NextStatus::lost) {
      add(read, Run{true, lost, core::lost_reason(b.flags)});
      continue;
    }
    REQUIRE(reader->done(b));
    add(read, Run{false, 1});
  }
  CHECK_MESSAGE(read == kExpected, describe(read));

  // So does the recorder: its file's gap rows name them, one row per run.
  REQUIRE_MESSAGE(eventually([&] { return recorder_cursor(arena.arena()) >= kTotal; }, kWait), recorder.output());
  REQUIRE(recorder.signal(SIGTERM));
  CHECK(recorder.wait_exit(kWait) == 0);
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(out))
    if (e.path().extension() == ".h5") files.push_back(e.path().string());
  REQUIRE(files.size() == 1);
  auto recording = h5::open_recording(files);
  REQUIRE_MESSAGE(recording, (recording ? "" : recording.error().what));
  REQUIRE(recording->channels.size() == 1);
  const h5::RecordedChannel& c = recording->channels[0];
  std::vector<Run> recorded;
  std::uint64_t next = 0;
  std::size_t g = 0;
  for (const h5::RecordedBlock& b : c.blocks) {
    for (; g < c.gaps.size() && c.gaps[g].sequence < b.sequence; ++g) {
      CHECK(c.gaps[g].sequence == next);
      recorded.push_back(Run{true, c.gaps[g].blocks, static_cast<GapReason>(c.gaps[g].reason)});  // one row per run
      next = c.gaps[g].sequence + c.gaps[g].blocks;
    }
    CHECK(b.sequence == next);
    add(recorded, Run{false, 1});
    next = b.sequence + 1;
  }
  for (; g < c.gaps.size(); ++g) recorded.push_back(Run{true, c.gaps[g].blocks, static_cast<GapReason>(c.gaps[g].reason)});
  CHECK_MESSAGE(recorded == kExpected, describe(recorded));
}

}  // TEST_SUITE

#endif  // WEIR_CLI_PATH

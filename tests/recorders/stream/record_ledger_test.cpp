// The recorder's side of the run's ledger: every block a channel's writer published is in the run's
// files exactly once or in a gap row with its true reason (recorder_down after a kill, before_start
// for a recorder started late, shutdown after a stop it could not wait for), across restarts; the
// run record beside the files; fsync by policy; no empty file at a stop.
#include <doctest/doctest.h>

#include <signal.h>

#include <optional>

#include "harness.hpp"
#include "ledger_check.hpp"
#include "live_arena.hpp"

using namespace weir;
using namespace weir::test;

namespace {

}  // namespace

TEST_SUITE("recorders.stream.ledger") {

TEST_CASE("a recorder killed and restarted continues one run: a recorder_restart marker and a recorder_down row "
          "each time, nothing recorded twice, and the run record bounds the channel" *
          doctest::timeout(90)) {
  ScratchArena scratch("recledger");
  TempDir dir;
  const acq::SimOptions sim = sim_options({"adc0"}, 1000, 0, 200'000);  // paced: 200 blocks/s
  make_channels(scratch.arena(), sim, 16);  // a 16-block ring laps within 80 ms of a dead recorder
  const std::vector<std::string> argv =
      record_argv(scratch.name(), {"--channels", "adc0", "--out", dir.str(), "--run", "7", "--flush-ms", "50"});
  std::optional<SimWriter> writer;
  constexpr int kKills = 4;
  for (int round = 0; round <= kKills; ++round) {
    CAPTURE(round);
    Program recorder = Program::start(argv);
    REQUIRE(eventually([&] { return h5_files(dir.path()).size() == static_cast<std::size_t>(round + 1); }));
    REQUIRE(wait_for_recorder(scratch.arena(), recorder, 1, dir.path()));
    if (!writer) writer.emplace(scratch.arena(), sim);
    REQUIRE(eventually([&] { return flushed_blocks(scratch.arena(), "adc0", recorder.pid()) >= 20; }));
    if (round == kKills) {
      writer->stop();
      stop_cleanly(recorder);
      break;
    }
    recorder.signal(SIGKILL);
    CHECK(recorder.wait().signal == SIGKILL);
    std::this_thread::sleep_for(200ms);  // the writer laps the ring meanwhile
  }
  const std::uint64_t written = head_of(scratch.arena(), "adc0");
  const auto files = h5_files(dir.path());
  REQUIRE(files.size() == kKills + 1);
  const std::vector<Facts> facts = inspect_all(files);
  for (const Facts& f : facts) CHECK(f.root.at("run") == "7");  // one run
  const ChannelLedger l = channel_ledger(facts, "adc0");
  check_tiles(l, 0, written);
  CHECK(rows_of(l, "recorder_restart").size() == kKills);
  const auto down = rows_of(l, "recorder_down");
  CHECK(down.size() == kKills);
  for (const GapFact& g : rows_of(l, "recorder_restart")) {
    CHECK(g.blocks == 0);  // a marker
    const bool followed = std::any_of(down.begin(), down.end(), [&](const GapFact& d) { return d.sequence == g.sequence; });
    CHECK_MESSAGE(followed, "a recorder_down row starts at the marker " << g.sequence);
  }
  CHECK(rows_of(l, "before_start").empty());
  const ledger::RunRecord r = run_record(dir.path(), scratch.name(), 7);
  CHECK(r.run == 7);
  CHECK(r.arena == scratch.name());
  CHECK(r.arena_created_ns == scratch.arena().header().created_ns);
  CHECK(r.writer == "weir record");
  CHECK(r.started_ns > 0);
  CHECK(r.stopped_ns >= r.started_ns);
  CHECK(r.fsync == "rotation");
  CHECK(r.synced_ns >= r.started_ns);  // the last file was fsynced when it closed
  CHECK(r.faults.empty());
  const ledger::ChannelMark* m = r.find_channel("adc0");
  REQUIRE(m != nullptr);
  CHECK(m->first_sequence == 0);
  CHECK(m->written == written);
  CHECK(m->arena_created_ns == scratch.arena().header().created_ns);
  MESSAGE(kKills << " restarts: " << l.recorded << " of " << written << " blocks recorded, "
                 << written - l.recorded << " in recorder_down rows");
}

TEST_CASE("a recorder restarted after a clean stop continues the run with a marker and recorder_stopped" *
          doctest::timeout(60)) {
  ScratchArena scratch("recstopped");
  TempDir dir;
  const acq::SimOptions sim = sim_options({"adc0"}, 1000, 0, 200'000);  // paced: 200 blocks/s
  make_channels(scratch.arena(), sim, 16);
  const std::vector<std::string> argv =
      record_argv(scratch.name(), {"--channels", "adc0", "--out", dir.str(), "--run", "3", "--flush-ms", "50"});
  SimWriter writer(scratch.arena(), sim);
  for (int round = 0; round < 2; ++round) {
    Program recorder = Program::start(argv);
    REQUIRE(wait_for_recorder(scratch.arena(), recorder, 1, dir.path()));
    REQUIRE(eventually([&] { return recorder_blocks_read(scratch.arena(), "adc0", recorder.pid()) >= 20; }));
    if (round == 1) writer.stop();
    stop_cleanly(recorder);
    std::this_thread::sleep_for(200ms);  // the writer laps the ring meanwhile
  }
  const auto files = h5_files(dir.path());
  REQUIRE(files.size() == 2);
  const std::vector<Facts> facts = inspect_all(files);
  const ChannelLedger l = channel_ledger(facts, "adc0");
  check_tiles(l, 0, run_record(dir.path(), scratch.name(), 3).find_channel("adc0")->written);
  const auto marker = rows_of(l, "recorder_restart"), stopped = rows_of(l, "recorder_stopped");
  REQUIRE(marker.size() == 1);
  REQUIRE(stopped.size() == 1);
  CHECK(marker[0].blocks == 0);
  CHECK(stopped[0].sequence == marker[0].sequence);
  CHECK(stopped[0].blocks > 0);
  CHECK(rows_of(l, "recorder_down").empty());
  const auto first = parse_ranges(facts[0].seqs.at("adc0"));
  REQUIRE(!first.empty());
  CHECK(marker[0].sequence == first.back().second + 1);  // one past the first file's last block
}

TEST_CASE("a recorder started after its writer records from then on and accounts for the earlier blocks as "
          "before_start, and with --from-oldest also records what the ring still holds" *
          doctest::timeout(60)) {
  for (const bool oldest : {false, true}) {
    CAPTURE(oldest);
    ScratchArena scratch("reclate");
    TempDir dir;
    constexpr std::uint64_t kEarly = 300, kLater = 50;
    const acq::SimOptions sim = sim_options({"adc0"}, 256, kEarly);
    make_channels(scratch.arena(), sim, 64);
    SimWriter(scratch.arena(), sim).finish();  // no reader yet: nothing holds it back
    REQUIRE(head_of(scratch.arena(), "adc0") == kEarly);
    std::vector<std::string> args{"--channels", "adc0", "--out", dir.str()};
    if (oldest) args.push_back("--from-oldest");
    Program recorder = Program::start(record_argv(scratch.name(), args));
    REQUIRE(wait_for_recorder(scratch.arena(), recorder, 1, dir.path()));
    SimWriter(scratch.arena(), sim_options({"adc0"}, 256, kLater)).finish();
    REQUIRE(eventually([&] { return recorder_blocks_read(scratch.arena(), "adc0", recorder.pid()) >= kLater; }));
    stop_cleanly(recorder);
    const auto files = h5_files(dir.path());
    REQUIRE(files.size() == 1);
    const ChannelLedger l = channel_ledger(inspect_all(files), "adc0");
    check_tiles(l, 0, kEarly + kLater);
    const auto before = rows_of(l, "before_start");
    REQUIRE(before.size() == 1);  // one run-length row
    CHECK(before[0].sequence == 0);
    if (!oldest) CHECK(before[0].blocks == kEarly);
    if (oldest) CHECK(before[0].blocks < kEarly - 32);  // the ring's blocks were recorded
    CHECK(l.rows.size() == 1);
    // Times from the axes are >= 0: the ring's blocks predate the file, so the axis starts at the first.
    const Exit axes =
        run_program({WEIR_PYTHON, std::string(WEIR_RECORDER_SCRIPTS) + "/check_recording.py", "axes", files[0]});
    INFO(axes.out << axes.err);
    CHECK(axes.code == 0);
    if (oldest) CHECK(contains(axes.out, "min_time_s 0.0 "));
    if (oldest) CHECK_FALSE(contains(axes.out, "origin_before_start_s 0.0\n"));
    const ledger::RunRecord r = run_record(dir.path(), scratch.name(), 1);
    REQUIRE(r.find_channel("adc0") != nullptr);
    CHECK(r.find_channel("adc0")->first_sequence == 0);
    CHECK(r.find_channel("adc0")->written == kEarly + kLater);
  }
}

TEST_CASE("a lossy recorder told to stop while its writer runs on accounts for what it did not take as shutdown" *
          doctest::timeout(60)) {
  ScratchArena scratch("recshut");
  TempDir dir;
  const acq::SimOptions sim = sim_options({"adc0"}, 256, 0, 2'000'000);  // ~7800 blocks/s
  make_channels(scratch.arena(), sim, 16);
  Program recorder = Program::start(record_argv(
      scratch.name(), {"--channels", "adc0", "--out", dir.str(), "--policy", "lossy", "--throttle-us", "500"}));
  REQUIRE(wait_for_recorder(scratch.arena(), recorder, 1, dir.path()));
  SimWriter writer(scratch.arena(), sim);
  REQUIRE(eventually([&] { return recorder_blocks_read(scratch.arena(), "adc0", recorder.pid()) >= 200; }));
  stop_cleanly(recorder);  // the writer runs on
  writer.stop();
  const ChannelLedger l = channel_ledger(inspect_all(h5_files(dir.path())), "adc0");
  const ledger::RunRecord r = run_record(dir.path(), scratch.name(), 1);
  REQUIRE(r.find_channel("adc0") != nullptr);
  const std::uint64_t written = r.find_channel("adc0")->written;
  CHECK(written > 0);
  check_tiles(l, 0, written);  // exact up to the head the stop measured
  CHECK(!rows_of(l, "lapped").empty());
  for (const GapFact& g : l.rows) CHECK((g.reason == "lapped" || g.reason == "shutdown"));
}

TEST_CASE("fsync by policy: the run record says when the files were last synced" * doctest::timeout(60)) {
  for (const std::string policy : {"never", "interval", "rotation"}) {
    CAPTURE(policy);
    ScratchArena scratch("recsync");
    TempDir dir;
    const acq::SimOptions sim = sim_options({"adc0"}, 1000, 0, 200'000);
    make_channels(scratch.arena(), sim);
    std::vector<std::string> args{"--channels", "adc0", "--out", dir.str(), "--flush-ms", "50", "--fsync", policy};
    if (policy == "interval") args.insert(args.end(), {"--fsync-interval-s", "0.2"});
    Program recorder = Program::start(record_argv(scratch.name(), args));
    REQUIRE(wait_for_recorder(scratch.arena(), recorder, 1, dir.path()));
    SimWriter writer(scratch.arena(), sim);
    REQUIRE(eventually([&] { return recorder_blocks_read(scratch.arena(), "adc0", recorder.pid()) >= 100; }));
    const std::uint64_t synced_live = run_record(dir.path(), scratch.name(), 1).synced_ns;
    if (policy == "interval") CHECK(synced_live > 0);  // the open file, synced while it is written
    if (policy != "interval") CHECK(synced_live == 0);
    writer.stop();
    stop_cleanly(recorder);
    const ledger::RunRecord r = run_record(dir.path(), scratch.name(), 1);
    CHECK(r.fsync == policy);
    if (policy == "never") CHECK(r.synced_ns == 0);
    if (policy != "never") CHECK(r.synced_ns >= synced_live);
    if (policy == "rotation") CHECK(r.synced_ns > 0);
    const auto files = h5_files(dir.path());
    REQUIRE(files.size() == 1);
    const Facts f = inspect(files[0]);  // closed: plain h5py opens it
    INFO(f.exit.out << f.exit.err);
    CHECK(f.ok());
    CHECK(f.root.at("stop_time") != "-");
  }
}

TEST_CASE("a stop after time rotations with nothing to write leaves no empty file" * doctest::timeout(60)) {
  ScratchArena scratch("recempty");
  TempDir dir;
  const acq::SimOptions sim = sim_options({"adc0"}, 1000, 0, 100'000);
  make_channels(scratch.arena(), sim);
  Program recorder = Program::start(
      record_argv(scratch.name(), {"--channels", "adc0", "--out", dir.str(), "--rotate-s", "0.3", "--flush-ms", "50"}));
  REQUIRE(wait_for_recorder(scratch.arena(), recorder, 1, dir.path()));
  {
    SimWriter writer(scratch.arena(), sim);
    std::this_thread::sleep_for(1000ms);
  }
  const std::uint64_t written = head_of(scratch.arena(), "adc0");
  std::this_thread::sleep_for(1000ms);  // three rotation periods with nothing published
  stop_cleanly(recorder);
  const auto files = h5_files(dir.path());
  CHECK(files.size() >= 2);
  const std::vector<Facts> facts = inspect_all(files);
  for (std::size_t i = 0; i < files.size(); ++i) {
    CAPTURE(files[i]);
    CHECK(facts[i].num("adc0", "blocks") > 0);
  }
  check_tiles(channel_ledger(facts, "adc0"), 0, written);
}

}  // TEST_SUITE

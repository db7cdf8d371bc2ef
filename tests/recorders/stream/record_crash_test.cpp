// A recorder killed with SIGKILL and restarted, three times; a slow lossy recorder overrun by its
// writer. What the files hold must account for every published block exactly.
#include <doctest/doctest.h>

#include <signal.h>

#include <algorithm>
#include <optional>

#include "harness.hpp"
#include "live_arena.hpp"

using namespace weir;
using namespace weir::test;

TEST_SUITE("recorders.stream.crash") {

TEST_CASE("a recorder killed three times leaves readable files holding every flushed block, and each restart "
          "records a recorder_restart marker where it continued and what it missed as recorder_down" *
          doctest::timeout(60)) {
  // Encoded, the chunks a kill catches are on the encoder threads or half-filled and flushed, to be
  // written again whole: the same counts must hold.
  std::vector<std::string> args{"--channels", "adc0", "--run", "1", "--flush-ms", "100"};
  SUBCASE("uncompressed") {}
  SUBCASE("encoded on two threads") { args.insert(args.end(), {"--codec", "shuffle+lz4", "--encode-threads", "2"}); }
  ScratchArena scratch("reckill");
  TempDir dir, exported;
  const acq::SimOptions sim = sim_options({"adc0"}, 1000, 0, 200'000);  // paced: 200 blocks/s
  make_channels(scratch.arena(), sim, 16);  // a 16-block ring laps within 80 ms of a dead recorder
  args.insert(args.end(), {"--out", dir.str()});
  const std::vector<std::string> argv = record_argv(scratch.name(), args);
  std::optional<SimWriter> writer;
  std::vector<std::uint64_t> flushed;  // per killed recorder: blocks it had flushed when killed
  constexpr int kKills = 3;
  for (int round = 0; round <= kKills; ++round) {
    CAPTURE(round);
    Program recorder = Program::start(argv);
    REQUIRE(eventually([&] { return h5_files(dir.path()).size() == static_cast<std::size_t>(round + 1); }));
    REQUIRE(wait_for_recorder(scratch.arena(), recorder, 1, dir.path()));
    if (!writer) writer.emplace(scratch.arena(), sim);
    // A few flushes with blocks in them: blocks_out moves at each flush.
    REQUIRE(eventually([&] { return flushed_blocks(scratch.arena(), "adc0", recorder.pid()) >= 30; }));
    if (round == kKills) {
      writer->stop();
      recorder.signal(SIGTERM);
      const Exit done = recorder.wait();
      INFO(done.err);
      CHECK(done.code == 0);
      break;
    }
    flushed.push_back(flushed_blocks(scratch.arena(), "adc0", recorder.pid()));
    recorder.signal(SIGKILL);
    const Exit killed = recorder.wait();
    CHECK(killed.signal == SIGKILL);
    // Right after the kill: the file the dead recorder wrote is still NAME.partial, never under its
    // final name, and every earlier one (named by a restart) is final; a SWMR reader opens it.
    const std::vector<std::string> now = h5_files(dir.path());
    REQUIRE(now.size() == static_cast<std::size_t>(round + 1));
    for (std::size_t i = 0; i + 1 < now.size(); ++i) CHECK(now[i].ends_with(".h5"));
    const std::string file = now.back();
    REQUIRE(file.ends_with(".h5.partial"));
    CHECK_FALSE(std::filesystem::exists(file.substr(0, file.size() - std::string_view(".partial").size())));
    const Facts facts = inspect(file, true);
    INFO(facts.exit.out << facts.exit.err);
    REQUIRE(facts.ok());
    CHECK(facts.root.at("stop_time") == "-");  // not a clean stop
    CHECK(flushed.back() > 0);
    CHECK(facts.num("adc0", "blocks") >= flushed.back());
    std::this_thread::sleep_for(250ms);  // the writer laps the ring meanwhile
  }
  const auto files = h5_files(dir.path());
  REQUIRE(files.size() == kKills + 1);
  // The restarts cleared the marks the dead recorders left and named their files: plain readers and
  // h5dump open every file, each under its final name.
  for (const std::string& f : files) CHECK_MESSAGE(f.ends_with(".h5"), f);
  const std::vector<Facts> facts = inspect_all(files, false, exported.str());
  std::uint64_t last = 0;
  for (std::size_t i = 0; i < files.size(); ++i) {
    CAPTURE(files[i]);
    const Facts& f = facts[i];
    INFO(f.exit.out << f.exit.err);
    REQUIRE(f.ok());
    CHECK(h5dump(files[i]).code == 0);
    CHECK(f.root.at("segment") == std::to_string(i));
    const auto ranges = parse_ranges(f.seqs.at("adc0"));
    REQUIRE(ranges.size() == 1);  // paced at 200 blocks/s, a live recorder misses nothing
    if (i < flushed.size()) CHECK(f.num("adc0", "blocks") >= flushed[i]);
    if (i == 0) {
      CHECK(ranges[0].first == 0);
      CHECK(f.gaps.empty());
    } else {
      REQUIRE(f.gaps.size() == 2);
      CHECK(f.gaps[0].reason == "recorder_restart");  // the marker where the restarted recorder continued...
      CHECK(f.gaps[0].sequence == last + 1);          // ...one past the previous file's last block
      CHECK(f.gaps[0].blocks == 0);
      CHECK(f.gaps[1].reason == "recorder_down");  // what the ring no longer held
      CHECK(f.gaps[1].sequence == last + 1);
      CHECK(f.gaps[1].sequence + f.gaps[1].blocks == ranges[0].first);  // ...up to this file's first block
      CHECK(f.gaps[1].blocks > 0);
    }
    last = ranges[0].second;
    check_samples(f, (exported.path() / std::to_string(i)).string(), sim, 0);
  }
  CHECK(last + 1 <= head_of(scratch.arena(), "adc0"));
}

TEST_CASE("weir repair makes a killed recorder's file open in plain h5py and h5dump, and refuses a live one's" *
          doctest::timeout(60)) {
  ScratchArena scratch("recrepair");
  TempDir dir;
  const acq::SimOptions sim = sim_options({"adc0"}, 1000, 0, 200'000);
  make_channels(scratch.arena(), sim);
  Program recorder = Program::start(
      record_argv(scratch.name(), {"--channels", "adc0", "--out", dir.str(), "--flush-ms", "100"}));
  REQUIRE(wait_for_recorder(scratch.arena(), recorder, 1, dir.path()));
  SimWriter writer(scratch.arena(), sim);
  REQUIRE(eventually([&] { return flushed_blocks(scratch.arena(), "adc0", recorder.pid()) >= 10; }));
  const std::string file = h5_files(dir.path()).back();
  const auto plain_h5py = [&] {  // no swmr=True: what a user types first
    return run_program({WEIR_PYTHON, "-c", "import sys, h5py; f = h5py.File(sys.argv[1], 'r'); print(len(f['entry/adc0/data']))",
                        file});
  };
  const Exit live = run_program({WEIR_CLI_PATH, "repair", file});
  CHECK(live.code == 1);
  CHECK(contains(live.err, "recorder pid " + std::to_string(recorder.pid()) + " is alive"));

  recorder.signal(SIGKILL);
  CHECK(recorder.wait().signal == SIGKILL);
  writer.stop();
  CHECK(plain_h5py().code != 0);  // the marks refuse every reader but a SWMR one
  CHECK(h5dump(file).code != 0);

  const Exit repaired = run_program({WEIR_CLI_PATH, "repair", file});
  INFO(repaired.out << repaired.err);
  CHECK(repaired.code == 0);
  CHECK(contains(repaired.out, file + ": cleared the write marks recorder pid " + std::to_string(recorder.pid())));
  const Exit opened = plain_h5py();
  INFO(opened.out << opened.err);
  CHECK(opened.code == 0);
  CHECK(std::stoull(opened.out) > 0);
  CHECK(h5dump(file).code == 0);
  const Facts facts = inspect(file, false);
  INFO(facts.exit.out << facts.exit.err);
  CHECK(facts.ok());

  const Exit again = run_program({WEIR_CLI_PATH, "repair", file, "--json"});
  CHECK(again.code == 0);
  CHECK(contains(again.out, "\"result\":\"clean\""));
  const Exit missing = run_program({WEIR_CLI_PATH, "repair", (dir.path() / "none.h5").string()});
  CHECK(missing.code == 1);
  CHECK(contains(missing.err, "none.h5"));
}

TEST_CASE("a slow lossy recorder overrun by its writer records blocks and gap blocks that add up to the blocks "
          "written, exactly" *
          doctest::timeout(60)) {
  ScratchArena scratch("reclossy");
  TempDir dir, exported;
  constexpr std::uint64_t kWritten = 600;
  const acq::SimOptions sim = sim_options({"adc0"}, 256, kWritten);
  make_channels(scratch.arena(), sim, 16);
  Program recorder = Program::start(record_argv(
      scratch.name(), {"--channels", "adc0", "--out", dir.str(), "--policy", "lossy", "--throttle-us", "1000", "--json"}));
  REQUIRE(wait_for_recorder(scratch.arena(), recorder, 1, dir.path()));
  {
    SimWriter writer(scratch.arena(), sim);
    CHECK(writer.finish().blocks_published == kWritten);  // a lossy reader never holds the writer
  }
  REQUIRE(eventually([&] {  // the recorder has passed every block: read or counted lost
    for (const core::ChannelInfo& c : core::list_channels(scratch.arena()))
      for (const core::ConsumerInfo& r : c.consumers)
        if (r.kind == "record:hdf5") return r.cursor == kWritten;
    return false;
  }));
  recorder.signal(SIGTERM);
  const Exit done = recorder.wait();
  INFO(done.err);
  REQUIRE(done.code == 0);
  const auto files = h5_files(dir.path());
  REQUIRE(files.size() == 1);
  const Facts f = inspect(files[0], false, exported.str());
  INFO(f.exit.out << f.exit.err);
  REQUIRE(f.ok());
  const std::uint64_t blocks = f.num("adc0", "blocks"), gap_blocks = f.num("adc0", "gap_blocks");
  CHECK(blocks + gap_blocks == kWritten);
  CHECK(gap_blocks > 0);  // it really was overrun
  CHECK(blocks > 0);
  CHECK(contains(done.out, "\"blocks\":" + std::to_string(blocks)));
  CHECK(contains(done.out, "\"gap_blocks\":" + std::to_string(gap_blocks)));
  // The recorded blocks and the gap rows tile [0, written) with no overlap and no hole.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> spans = parse_ranges(f.seqs.at("adc0"));
  for (const GapFact& g : f.gaps) {
    CHECK(g.reason == "lapped");
    spans.emplace_back(g.sequence, g.sequence + g.blocks - 1);
  }
  std::sort(spans.begin(), spans.end());
  std::uint64_t next = 0;
  for (const auto& [first, last] : spans) {
    CHECK(first == next);
    next = last + 1;
  }
  CHECK(next == kWritten);
  check_samples(f, exported.str(), sim, 0);
}

}  // TEST_SUITE

// Rotation by size stopped by a signal: every file the run leaves holds a block or a gap row (no
// empty trailing file), and the run's audit is exact.
#include <doctest/doctest.h>

#include <signal.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "harness.hpp"
#include "ledger_check.hpp"
#include "live_arena.hpp"
#include "weir/ledger/audit.hpp"

using namespace weir;
using namespace weir::test;
using namespace std::chrono_literals;

TEST_SUITE("recorders.stream.rotate") {

TEST_CASE("20 stops after rotations by size leave no file without a block or a gap row, every file but the last "
          "holds the same whole number of blocks, and the audit is exact" *
          doctest::timeout(180)) {
  // A writer at 400 blocks/s of 1000 samples (4 kB a block): 0.1 MB files rotate every ~60 ms, so a
  // stop falls close to a rotation; stopped while writing and after the writer stopped.
  // Each block commits 4000 bytes of samples, an 8-byte time and a 40-byte table row: a file's
  // payload reaches 0.1 MiB (104858 bytes) with its 26th block, whenever the flushes came.
  constexpr double kBlockBytes = 4000 + 8 + 40;
  const auto kPerFile = static_cast<std::uint64_t>(std::ceil(0.1 * 1024 * 1024 / kBlockBytes));
  for (int run = 0; run < 20; ++run) {
    const bool writer_first = run % 2 == 1;
    CAPTURE(run);
    CAPTURE(writer_first);
    ScratchArena scratch("recrotstop");
    TempDir dir;
    const acq::SimOptions sim = sim_options({"adc0"}, 1000, 0, 400'000);
    make_channels(scratch.arena(), sim);
    Program recorder = Program::start(record_argv(
        scratch.name(), {"--channels", "adc0", "--out", dir.str(), "--rotate-mb", "0.1", "--flush-ms", "20"}));
    REQUIRE(wait_for_recorder(scratch.arena(), recorder, 1, dir.path()));
    {
      SimWriter writer(scratch.arena(), sim);
      REQUIRE(eventually([&] { return h5_files(dir.path()).size() >= 4; }));
      if (!writer_first) {
        recorder.signal(SIGTERM);
        std::this_thread::sleep_for(50ms);
      }
    }
    stop_cleanly(recorder);
    const auto files = h5_files(dir.path());
    CHECK(files.size() >= 4);
    const std::vector<Facts> facts = inspect_all(files);
    for (std::size_t i = 0; i < files.size(); ++i) {
      CAPTURE(files[i]);
      INFO(facts[i].exit.out << facts[i].exit.err);
      REQUIRE(facts[i].ok());
      CHECK(facts[i].num("adc0", "blocks") + facts[i].num("adc0", "gaps") > 0);
      if (i + 1 < files.size()) CHECK(facts[i].num("adc0", "blocks") == kPerFile);
    }
    auto audit = ledger::audit_run(dir.path());
    REQUIRE_MESSAGE(audit, (audit ? "" : audit.error().what));
    CHECK(audit->exact());
    REQUIRE(audit->channels.size() == 1);
    CHECK(audit->channels[0].unaccounted == 0);
    CHECK(audit->channels[0].duplicates == 0);
    // The run ends at the recorder's last look: a writer stopped after it (and held up meanwhile by
    // the ring the stopping recorder no longer drained) may publish past what the run counts.
    if (writer_first) CHECK(audit->channels[0].written == head_of(scratch.arena(), "adc0"));
    if (!writer_first) CHECK(audit->channels[0].written <= head_of(scratch.arena(), "adc0"));
  }
}

TEST_CASE("a channel that appears just before a stop leaves no file without a block or a gap row" *
          doctest::timeout(60)) {
  ScratchArena scratch("recrotnew");
  TempDir dir;
  const acq::SimOptions sim = sim_options({"adc0"}, 1000, 200);
  make_channels(scratch.arena(), sim);
  Program recorder = Program::start(record_argv(
      scratch.name(), {"--channels", "adc*", "--out", dir.str(), "--rotate-mb", "0.1", "--flush-ms", "20"}));
  REQUIRE(wait_for_recorder(scratch.arena(), recorder, 1, dir.path()));
  {
    SimWriter writer(scratch.arena(), sim);
    (void)writer.finish();
  }
  REQUIRE(head_of(scratch.arena(), "adc0") == 200);
  std::this_thread::sleep_for(500ms);  // written and flushed (every 20 ms)
  // A new channel needs a file that holds it: the recorder closes its file and opens the next at
  // once, before anything is published to it.
  make_channels(scratch.arena(), sim_options({"adc1"}, 1000, 0));
  REQUIRE(eventually([&] { return recorder_rows(scratch.arena(), recorder.pid()) == 2; }));
  std::this_thread::sleep_for(200ms);
  stop_cleanly(recorder);
  const auto files = h5_files(dir.path());
  CHECK(files.size() >= 2);
  const std::vector<Facts> facts = inspect_all(files);
  for (std::size_t i = 0; i < files.size(); ++i) {
    CAPTURE(files[i]);
    INFO(facts[i].exit.out << facts[i].exit.err);
    REQUIRE(facts[i].ok());
    CHECK(facts[i].num("adc0", "blocks") + facts[i].num("adc0", "gaps") + facts[i].num("adc1", "blocks") +
              facts[i].num("adc1", "gaps") >
          0);
  }
  check_tiles(channel_ledger(facts, "adc0"), 0, 200);
  auto audit = ledger::audit_run(dir.path());
  REQUIRE_MESSAGE(audit, (audit ? "" : audit.error().what));
  CHECK(audit->exact());
}

}  // TEST_SUITE

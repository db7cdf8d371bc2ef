// The NeXus entry fields (format 1.6) of every file of a rotated recording by a real `weir record`,
// read back with h5py (check_recording.py entry): title, start_time and end_time (ISO 8601, the
// file's own first and last block), and the NXinstrument's NXdetector of each channel.
#include <doctest/doctest.h>

#include <signal.h>

#include <chrono>
#include <thread>

#include "harness.hpp"
#include "live_arena.hpp"

using namespace weir;
using namespace weir::test;
using namespace std::chrono_literals;

TEST_SUITE("recorders.stream.entry") {

TEST_CASE("every rotated file has its own NeXus title, start and end time, and one NXdetector per channel" *
          doctest::timeout(60)) {
  ScratchArena scratch("recentry");
  TempDir dir;
  const acq::SimOptions sim = sim_options({"adc0", "adc1"}, 1000, 0, 200'000);
  make_channels(scratch.arena(), sim);
  Program recorder = Program::start(record_argv(
      scratch.name(), {"--channels", "adc*", "--out", dir.str(), "--run", "7", "--rotate-mb", "0.2", "--flush-ms", "50"}));
  REQUIRE(wait_for_recorder(scratch.arena(), recorder, 2, dir.path()));
  {
    SimWriter writer(scratch.arena(), sim);
    REQUIRE(eventually([&] { return h5_files(dir.path()).size() >= 3; }));
  }
  stop_cleanly(recorder);
  const auto files = h5_files(dir.path());
  REQUIRE(files.size() >= 3);
  std::string previous_start;
  for (const std::string& file : files) {
    CAPTURE(file);
    const Exit checked = run_program({WEIR_PYTHON, std::string(WEIR_RECORDER_SCRIPTS) + "/check_recording.py", "entry",
                                      file, scratch.name() + " run 7"});
    INFO(checked.out << checked.err);
    CHECK(checked.code == 0);
    CHECK(contains(checked.out, "ok detector adc0 200000.0 V f32 1000\n"));
    CHECK(contains(checked.out, "ok detector adc1 200000.0 V f32 1000\n"));
    const auto at = checked.out.find("ok entry ");
    REQUIRE(at != std::string::npos);
    const std::string start = checked.out.substr(at + 9, 30);
    CHECK(start > previous_start);  // each file its own times, in order
    previous_start = start;
  }
}

}  // TEST_SUITE

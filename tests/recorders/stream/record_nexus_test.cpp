// The NeXus metadata a pipeline gives its recordings (`weir record --pipeline FILE`): the entry's
// title, definition and default plot, the NXsource, each NXdetector's part, driver and settings, and
// a channel's calibration beside its raw data; read back with h5py (check_nexus_meta.py).
#include <doctest/doctest.h>

#include <signal.h>

#include <fstream>

#include "harness.hpp"
#include "live_arena.hpp"

using namespace weir;
using namespace weir::test;

namespace {

// Records adc0 and adc1 (a short burst of the simulator) with `pipeline` as --pipeline; returns
// check_nexus_meta.py's report of each file, and the recorder's stderr in `err`.
std::vector<std::string> record_with(const std::string& pipeline_text, std::string& err) {
  ScratchArena scratch("recnexus");
  TempDir dir;
  const acq::SimOptions sim = sim_options({"adc0", "adc1"}, 1000, 20);
  make_channels(scratch.arena(), sim);
  const std::string pipeline = dir.file("pipeline.lua");
  std::ofstream(pipeline) << pipeline_text;
  const std::string out = dir.str() + "/rec";
  Program recorder = Program::start(record_argv(scratch.name(), {"--channels", "adc*", "--out", out, "--run", "3",
                                                                 "--pipeline", pipeline}));
  REQUIRE(wait_for_recorder(scratch.arena(), recorder, 2, out));
  {
    SimWriter writer(scratch.arena(), sim);
    CHECK(writer.finish().blocks_published == 40);
  }
  REQUIRE(eventually([&] { return recorder_blocks_read(scratch.arena(), "adc1", recorder.pid()) == 20; }));
  recorder.signal(SIGTERM);
  const Exit done = recorder.wait();
  INFO(done.out << done.err);
  REQUIRE(done.code == 0);
  err = done.err;
  std::vector<std::string> reports;
  for (const std::string& file : h5_files(out)) {
    const Exit checked = run_program({WEIR_PYTHON, std::string(WEIR_RECORDER_SCRIPTS) + "/check_nexus_meta.py", file});
    INFO(file << "\n" << checked.out << checked.err);
    CHECK(checked.code == 0);
    reports.push_back(checked.out + "arena=" + scratch.name() + "\n");
  }
  return reports;
}

}  // namespace

TEST_SUITE("recorders.stream.nexus") {

TEST_CASE("the pipeline's entry, source, parts and calibration are in every file" * doctest::timeout(60)) {
  std::string err;
  const auto reports = record_with(R"lua(arena { name = "bench" }
entry { title = "Cs-137 calibration run", definition = "NXmonopd", default = "adc1" }
source "ESS" { type = "Spallation Neutron Source", probe = "neutron" }
channel "adc0" { dtype = "f32", rate = 1e6, block = 1000, units = "V",
                 calibration = { scale = 3.0517578125e-05, offset = -0.25, units = "mV" } }
channel "adc1" { dtype = "f32", rate = 1e6, block = 1000 }
driver "sim" { name = "pulser", channels = {"adc0"}, signal = "sine", frequency = 1000, amplitude = 0.5 }
)lua",
                                   err);
  REQUIRE_FALSE(reports.empty());
  for (const std::string& r : reports) {
    INFO(r);
    CHECK(contains(r, "entry title=Cs-137 calibration run definition=NXmonopd default=adc1\n"));
    CHECK(contains(r, "source name=ESS type=Spallation Neutron Source probe=neutron\n"));
    CHECK(contains(r, "detector adc0 part=pulser driver=sim role=driver\n"));
    CHECK(contains(r, "setting adc0 signal=sine\n"));
    CHECK(contains(r, "setting adc0 frequency=1000\n"));
    CHECK(contains(r, "setting adc0 amplitude=0.5\n"));
    CHECK_FALSE(contains(r, "detector adc1"));  // no part of the pipeline writes it
    CHECK(contains(r, "calibration adc0 scale=3.0517578125e-05 offset=-0.25 units=mV scale_units=mV/V offset_units=mV\n"));
    CHECK(contains(r, "data adc0 scale=3.0517578125e-05 offset=-0.25 units=mV\n"));
    CHECK_FALSE(contains(r, "calibration adc1"));
  }
}

TEST_CASE("without an entry declaration, or with a file that is no pipeline, the recorder's own entry fields" *
          doctest::timeout(60)) {
  std::string err;
  const auto plain = record_with("arena { name = \"bench\" }\nchannel \"adc0\" { rate = 1e6 }\n", err);
  REQUIRE_FALSE(plain.empty());
  for (const std::string& r : plain) {
    INFO(r);
    const std::string arena = r.substr(r.find("arena=") + 6, r.size() - r.find("arena=") - 7);
    CHECK(contains(r, "entry title=" + arena + " run 3 definition=NXentry default=adc0\n"));
    CHECK_FALSE(contains(r, "source "));
    CHECK_FALSE(contains(r, "calibration "));
  }
  CHECK_FALSE(contains(err, "no NeXus metadata"));
  const auto none = record_with("this is no pipeline\n", err);
  REQUIRE_FALSE(none.empty());
  for (const std::string& r : none) {
    INFO(r);
    CHECK(contains(r, "definition=NXentry default=adc0\n"));
  }
  CHECK(contains(err, "--pipeline "));
  CHECK(contains(err, "no NeXus metadata from it"));
}

}  // TEST_SUITE

// The detector bench recorded for a few seconds: its MCA spectrum is a (changes x bins) u32 array
// key, whole, and an NXdata of counts against its pulse-height axis, or with the mca's energy
// calibration against energy in keV (format 1.6), read back
// with h5py (check_spectrum.py) against the simulator's lines and with h5dump.
#include <doctest/doctest.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "harness.hpp"

using namespace weir;
using namespace weir::test;

namespace {

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

// The detector bench with its arena and output renamed, and `extra` added to its mca; run for 3 s,
// then checked by check_spectrum.py with `args` after the lines.
void record_bench(const std::string& mca_extra, const std::vector<std::string>& args) {
  TempDir dir;
  std::string lua = read_file(WEIR_EXAMPLES_DIR "/pipelines/detector_bench.lua");
  const std::string arena = "specrec" + std::to_string(::getpid());
  REQUIRE(lua.find("name = \"detector\"") != std::string::npos);
  REQUIRE(lua.find("bins = 1024, range = 1.5") != std::string::npos);  // what the checker is told
  replace_all(lua, "name = \"detector\"", "name = \"" + arena + "\"");
  replace_all(lua, "out = \"runs/\"", "out = \"" + dir.str() + "/runs/\"");
  replace_all(lua, "bins = 1024, range = 1.5", "bins = 1024, range = 1.5" + mca_extra);
  const std::string pipeline = dir.file("detector_bench.lua");
  std::ofstream(pipeline) << lua;

  const Exit run = run_program({WEIR_CLI_PATH, "run", pipeline, "--duration", "3", "--status-every", "0"},
                               std::chrono::seconds(60));
  REQUIRE_MESSAGE(run.code == 0, (run.out + run.err));
  CHECK_MESSAGE(run.out.find("errors 0") != std::string::npos, run.out);

  // The simulator's lines (acquisition/include/weir/acq/signal_generator.hpp), in volts at the MCA.
  std::vector<std::string> argv{WEIR_PYTHON, std::string(WEIR_RECORDER_SCRIPTS) + "/check_spectrum.py", dir.str(),
                                "det0.spectrum", "1024", "1.5", "0.662", "1.173", "1.332"};
  argv.insert(argv.end(), args.begin(), args.end());
  const Exit check = run_program(argv);
  CHECK_MESSAGE(check.code == 0, (check.out + check.err));
  MESSAGE(check.out);
  const std::vector<std::string> files = h5_files(dir.str() + "/runs");
  REQUIRE_FALSE(files.empty());
  std::size_t with_spectrum = 0;  // a file opened before the mca made its keys has none
  for (const std::string& file : files) {
    const Exit dump = h5dump(file);
    CHECK_MESSAGE(dump.code == 0, (file + ": " + dump.err));
    if (dump.out.find("\"det0.spectrum\"") != std::string::npos) ++with_spectrum;
  }
  CHECK(with_spectrum > 0);
}

}  // namespace

TEST_SUITE("recorders.stream.spectrum") {

TEST_CASE("the detector bench's file holds the whole MCA spectrum, as counts against pulse height" *
          doctest::timeout(120)) {
  record_bench("", {});
}

TEST_CASE("an energy-calibrated MCA's spectrum is counts against energy in keV" * doctest::timeout(120)) {
  record_bench(", energy = {2.5, 1000, -40}", {"--energy=2.5,1000,-40"});
}

}  // TEST_SUITE

// Refusals: a recording replay cannot use is refused with an error naming the file and the
// problem, and a channel that does not fit is refused before anything is created.
#include <doctest/doctest.h>

#include <fstream>

#include "proc_util.hpp"
#include "replay_fixture.hpp"
#include "scratch_dir.hpp"

using namespace weir;
using namespace weir::test;

namespace {

// The error opening these files, or "" when they open.
std::string refusal(const std::vector<std::string>& files) {
  auto recording = acq::open_recording(files);
  return recording ? std::string{} : recording.error().what;
}

bool has(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

// The error replaying `file` into `arena` with `options` ("" when it replays).
std::string replay_refusal(const core::Arena& arena, const std::string& file, const acq::ReplayOptions& options = {}) {
  auto recording = acq::open_recording(std::vector<std::string>{file});
  REQUIRE(recording);
  const std::atomic<bool> stop{false};
  auto report = acq::run_replay(arena, *recording, options, stop);
  return report ? std::string{} : report.error().what;
}

}  // namespace

TEST_SUITE("acquisition.replay") {

TEST_CASE("a recording replay cannot use is refused with the file named and the problem said") {
  ScratchDir dir("replay-refuse");
  const std::string path = dir.file("bad.h5");
  const RecChannel adc0 = u32_channel("adc0", {{0, 4}}, 0);
  std::string why;

  SUBCASE("a missing file") {
    why = refusal({dir.file("absent.h5")});
    CHECK(has(why, "absent.h5"));
    CHECK(has(why, "No such file"));
  }
  SUBCASE("a file that is not HDF5") {
    std::ofstream(path) << "time,value\n0,1\n";
    why = refusal({path});
    CHECK(has(why, "not an HDF5 file"));
  }
  SUBCASE("an HDF5 file without weir_format") {
    RecFileOptions o;
    o.format = "";
    write_recording(path, {adc0}, o);
    why = refusal({path});
    CHECK(has(why, "no weir_format"));
  }
  SUBCASE("another weir format") {
    RecFileOptions o;
    o.format = "weir-snapshot 1";
    write_recording(path, {adc0}, o);
    why = refusal({path});
    CHECK(has(why, "'weir-snapshot 1', not a weir recording"));
  }
  SUBCASE("a newer major version") {
    RecFileOptions o;
    o.format = "weir-recording 3.1";
    write_recording(path, {adc0}, o);
    why = refusal({path});
    CHECK(has(why, "recording format 3.1; this build reads formats 1 to 2"));
  }
  SUBCASE("a minor version it can read") {
    RecFileOptions o;
    o.format = "weir-recording 1.3";
    write_recording(path, {adc0}, o);
    CHECK(refusal({path}).empty());
    why = path;  // nothing to refuse: the name check below still holds
  }
  SUBCASE("a channel without its block table") {
    RecFileOptions o;
    o.omit_dataset = "block_sequence";
    write_recording(path, {adc0}, o);
    why = refusal({path});
    CHECK(has(why, "/entry/adc0: lacks the dataset block_sequence"));
  }
  SUBCASE("a channel without its gaps table") {
    RecFileOptions o;
    o.omit_dataset = "gaps";
    write_recording(path, {adc0}, o);
    why = refusal({path});
    CHECK(has(why, "lacks the dataset gaps"));
  }
  SUBCASE("a channel without its samples") {
    RecFileOptions o;
    o.omit_dataset = "data";
    write_recording(path, {adc0}, o);
    why = refusal({path});
    CHECK(has(why, "lacks the dataset data"));
  }
  SUBCASE("a run's files out of order") {
    write_recording(dir.file("a.h5"), {u32_channel("adc0", {{10, 4}}, 10)});
    write_recording(path, {adc0});
    why = refusal({dir.file("a.h5"), path});
    CHECK(has(why, "block sequence 0 does not follow 13"));
  }
  SUBCASE("a file without channels") {
    write_recording(path, {});
    why = refusal({path});
    CHECK(has(why, "holds no channels"));
  }
  CHECK(has(why, ".h5"));  // every refusal names its file
}

TEST_CASE("an existing channel of another dtype or block size is refused naming both, before anything is created") {
  ScratchDir dir("replay-clash");
  write_recording(dir.file("run.h5"), {u32_channel("adc0", {{0, 4}}, 0), u32_channel("adc1", {{0, 4}}, 0)});
  ArenaGuard guard(unique_name("replay-clash"));
  auto arena = core::Arena::create(guard.where(), replay_arena());
  REQUIRE(arena);
  core::ChannelSpec spec;
  spec.name = "adc1";
  spec.dtype = core::Dtype::f32;
  spec.rate_hz = 64000;
  spec.samples_per_block = 128;
  REQUIRE(core::create_channel(*arena, spec));

  const std::string why = replay_refusal(*arena, dir.file("run.h5"));
  REQUIRE_FALSE(why.empty());
  CHECK(has(why, "channel 'adc1'"));
  CHECK(has(why, "dtype f32 and blocks of 128 samples"));
  CHECK(has(why, "dtype u32 and blocks of 64 samples"));
  CHECK(has(why, "run.h5"));
  CHECK_FALSE(core::find_channel(*arena, "adc0"));  // nothing was created
}

TEST_CASE("an existing framed channel of the recording's block size is refused for a plain recording") {
  ScratchDir dir("replay-frames");
  write_recording(dir.file("run.h5"), {u32_channel("adc0", {{0, 4}}, 0)});
  ArenaGuard guard(unique_name("replay-frames"));
  auto arena = core::Arena::create(guard.where(), replay_arena());
  REQUIRE(arena);
  core::ChannelSpec spec;
  spec.name = "adc0";
  spec.dtype = core::Dtype::u32;
  spec.rate_hz = 64000;
  spec.samples_per_block = 64;
  spec.frame.frames_per_block = 2;  // same dtype and block size, but two frames of 32
  spec.frame.frame_elements = 32;
  REQUIRE(core::create_channel(*arena, spec));

  const std::string why = replay_refusal(*arena, dir.file("run.h5"));
  REQUIRE_FALSE(why.empty());
  CHECK(has(why, "dtype u32 and blocks of 64 samples in 2 frames of 32"));
  CHECK(has(why, "the recording"));
}

TEST_CASE("patterns that match no channel are an error listing the recording's channels") {
  ScratchDir dir("replay-nomatch");
  write_recording(dir.file("run.h5"), {u32_channel("adc0", {{0, 2}}, 0)});
  ArenaGuard guard(unique_name("replay-nomatch"));
  auto arena = core::Arena::create(guard.where(), replay_arena());
  REQUIRE(arena);
  acq::ReplayOptions options;
  options.channels = {"scope*"};
  const std::string why = replay_refusal(*arena, dir.file("run.h5"), options);
  REQUIRE_FALSE(why.empty());
  CHECK(has(why, "no channel of the recording matches"));
  CHECK(has(why, "adc0"));
}

}  // TEST_SUITE

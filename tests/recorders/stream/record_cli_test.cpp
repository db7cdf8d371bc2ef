// `weir record` as a user runs it: a separate process following channels a simulator thread of
// this test feeds, its files read back with h5py (inspect_recording.py, follow_swmr.py) and h5dump.
#include <doctest/doctest.h>

#include <signal.h>

#include <cstring>
#include <fstream>

#include "harness.hpp"
#include "live_arena.hpp"

using namespace weir;
using namespace weir::test;

namespace {

constexpr std::uint32_t kBlock = 1024;  // 4 KiB of f32

}  // namespace

TEST_SUITE("recorders.stream.cli") {

TEST_CASE("eight seeded channels recorded losslessly equal the simulator's signal sample by sample" *
          doctest::timeout(60)) {
  ScratchArena scratch("reccli");
  TempDir dir, exported;
  std::vector<std::string> names;
  for (int i = 0; i < 8; ++i) names.push_back("adc" + std::to_string(i));
  const acq::SimOptions sim = sim_options(names, kBlock, 150);
  make_channels(scratch.arena(), sim);
  const std::filesystem::path pipeline = dir.path() / "pipeline.lua";
  std::ofstream(pipeline) << "arena{ name = 'x' }\nchannel{ name = 'adc0', rate = 1e6 }\n";
  const std::filesystem::path out = dir.path() / "rec";
  Program recorder = Program::start(record_argv(
      scratch.name(), {"--channels", "adc*", "--out", out.string(), "--pipeline", pipeline.string(), "--json"}));
  REQUIRE(wait_for_recorder(scratch.arena(), recorder, names.size(), out));
  SimWriter writer(scratch.arena(), sim);
  CHECK(writer.finish().blocks_published == 150 * names.size());
  REQUIRE(eventually([&] {  // every block read before the stop: the count shows in the consumer rows
    std::uint64_t read = 0;
    for (const core::ChannelInfo& c : core::list_channels(scratch.arena()))
      for (const core::ConsumerInfo& r : c.consumers)
        if (r.kind == "record:hdf5") read += r.blocks_read;
    return read == 150 * names.size();
  }));
  recorder.signal(SIGTERM);
  const Exit done = recorder.wait();
  INFO(done.err);
  REQUIRE(done.exited);
  CHECK(done.code == 0);
  CHECK(contains(done.out, "\"blocks\":1200"));
  CHECK(contains(done.out, "\"gaps\":0"));
  CHECK(contains(done.out, "\"stopped_by\":\"request\""));

  const std::vector<std::string> files = h5_files(out);
  REQUIRE(files.size() == 1);
  CHECK(std::filesystem::path(files[0]).filename() == scratch.name() + "_run000001_0000.h5");
  const Facts facts = inspect(files[0], false, exported.str());
  INFO(facts.exit.out << facts.exit.err);
  REQUIRE(facts.ok());
  CHECK(facts.root.at("run") == "1");
  CHECK(facts.root.at("segment") == "0");
  CHECK(facts.root.at("arena") == scratch.name());
  CHECK(facts.root.at("weir_version") == WEIR_TEST_VERSION);
  CHECK(facts.root.at("stop_time") > facts.root.at("start_time"));  // ISO 8601 UTC sorts as text
  CHECK(facts.root.at("stop_time").back() == 'Z');
  CHECK(facts.root.at("pipeline_bytes") == std::to_string(std::filesystem::file_size(pipeline)));
  for (std::size_t i = 0; i < names.size(); ++i) {
    CAPTURE(names[i]);
    const auto& c = facts.channels.at(names[i]);
    CHECK(c.at("dtype") == "f32");
    CHECK(c.at("blocks") == "150");
    CHECK(c.at("samples") == std::to_string(150 * kBlock));
    CHECK(c.at("spb") == std::to_string(kBlock));
    CHECK(c.at("chunk") == std::to_string(64 * kBlock));  // whole blocks, 256 KiB
    CHECK(c.at("rate") == "1000000.0");
    CHECK(c.at("units") == "V");
    CHECK(c.at("labels") == "sim,test");
    CHECK(c.at("policy") == "lossless");
    CHECK(c.at("first_sample_index") == "0");
    CHECK(c.at("gaps") == "0");
    CHECK(facts.seqs.at(names[i]) == "0-149");
    check_samples(facts, exported.str(), sim, i);
  }
  const Exit dump = h5dump(files[0]);
  CHECK(dump.code == 0);
  CHECK(contains(dump.out, "DATASET \"block_sequence\""));
}

TEST_CASE("an integer channel keeps its native dtype and codes" * doctest::timeout(30)) {
  ScratchArena scratch("recint");
  TempDir dir, exported;
  acq::SimOptions sim = sim_options({"raw"}, 500, 40);
  sim.dtype = core::Dtype::i16;
  make_channels(scratch.arena(), sim);
  Program recorder = Program::start(record_argv(scratch.name(), {"--channels", "raw", "--out", dir.str(), "--compress", "4"}));
  REQUIRE(wait_for_recorder(scratch.arena(), recorder, 1, dir.path()));
  SimWriter writer(scratch.arena(), sim);
  (void)writer.finish();
  std::this_thread::sleep_for(200ms);
  recorder.signal(SIGINT);
  const Exit done = recorder.wait();
  INFO(done.err);
  CHECK(done.code == 0);
  const auto files = h5_files(dir.path());
  REQUIRE(files.size() == 1);
  const Facts facts = inspect(files[0], false, exported.str());
  INFO(facts.exit.out << facts.exit.err);
  REQUIRE(facts.ok());
  CHECK(facts.channels.at("raw").at("dtype") == "i16");
  CHECK(facts.channels.at("raw").at("compression") == "gzip");
  CHECK(facts.seqs.at("raw") == "0-39");
  // The codes the simulator wrote: its generator, converted the same way.
  acq::SignalConfig config = sim.signal;
  config.sample_rate_hz = sim.rate_hz;
  auto gen = acq::SignalGenerator::create(config, sim.block_samples);
  REQUIRE(gen);
  std::vector<std::byte> expected(40 * 500 * sizeof(std::int16_t));
  for (int b = 0; b < 40; ++b)
    (void)gen->fill(core::Dtype::i16, std::span<std::byte>(expected).subspan(std::size_t{500} * 2 * b), 500,
                    sim.full_scale_v);
  const std::string bytes = read_file(exported.path() / "raw.bin");
  REQUIRE(bytes.size() == expected.size());
  CHECK(std::memcmp(bytes.data(), expected.data(), expected.size()) == 0);
}

TEST_CASE("a SWMR reader sees the file grow while the recorder writes it" * doctest::timeout(30)) {
  ScratchArena scratch("recswmr");
  TempDir dir;
  const acq::SimOptions sim = sim_options({"adc0"}, 1000, 0, 100'000);  // paced: 100 blocks/s
  make_channels(scratch.arena(), sim);
  Program recorder = Program::start(record_argv(scratch.name(), {"--channels", "adc0", "--out", dir.str(), "--flush-ms", "100"}));
  REQUIRE(wait_for_recorder(scratch.arena(), recorder, 1, dir.path()));
  SimWriter writer(scratch.arena(), sim);
  const auto files = h5_files(dir.path());
  REQUIRE(files.size() == 1);
  const Exit follow = run_program({WEIR_PYTHON, std::string(WEIR_RECORDER_SCRIPTS) + "/follow_swmr.py", files[0], "adc0", "10"});
  INFO(follow.out << follow.err);
  CHECK(follow.code == 0);
  CHECK(contains(follow.out, "grown"));
  writer.stop();
  recorder.signal(SIGTERM);
  CHECK(recorder.wait().code == 0);
}

TEST_CASE("a pattern matching no channel is refused, naming it and the channels there are") {
  ScratchArena scratch("recnone");
  TempDir dir;
  make_channels(scratch.arena(), sim_options({"adc0", "temp"}, 64, 1));
  const Exit e = run_program(record_argv(scratch.name(), {"--channels", "adc*", "nope*", "--out", dir.str()}));
  CHECK(e.code == 1);
  CHECK(contains(e.err, "no channel matches 'nope*'"));
  CHECK(contains(e.err, "adc0, temp"));
  CHECK(h5_files(dir.path()).empty());
  for (const core::ChannelInfo& c : core::list_channels(scratch.arena())) CHECK(c.consumers.empty());
}

TEST_CASE("rotation by size gives numbered files, skipping an existing name and overwriting none" *
          doctest::timeout(40)) {
  ScratchArena scratch("recrot");
  TempDir dir;
  const acq::SimOptions sim = sim_options({"adc0"}, kBlock, 320);
  make_channels(scratch.arena(), sim);
  const std::filesystem::path taken = dir.path() / (scratch.name() + "_run000001_0001.h5");
  std::ofstream(taken) << "precious";
  Program recorder = Program::start(
      record_argv(scratch.name(), {"--channels", "adc0", "--out", dir.str(), "--run", "1", "--rotate-mb", "0.25"}));
  REQUIRE(wait_for_recorder(scratch.arena(), recorder, 1, dir.path()));
  SimWriter writer(scratch.arena(), sim);
  (void)writer.finish();
  std::this_thread::sleep_for(300ms);
  recorder.signal(SIGTERM);
  const Exit done = recorder.wait();
  INFO(done.err);
  CHECK(done.code == 0);
  CHECK(read_file(taken) == "precious");
  const auto files = h5_files(dir.path());
  REQUIRE(files.size() >= 4);
  std::vector<std::string> segments;
  for (const std::string& file : files)
    if (file != taken.string()) segments.push_back(file);
  const std::vector<Facts> facts = inspect_all(segments);
  std::uint64_t next = 0;  // the next sequence a segment must start with
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const std::string& file = segments[i];
    CAPTURE(file);
    const Facts& f = facts[i];
    INFO(f.exit.out << f.exit.err);
    REQUIRE(f.ok());
    CHECK(f.root.at("run") == "1");
    CHECK(file.ends_with("_" + std::string(4 - f.root.at("segment").size(), '0') + f.root.at("segment") + ".h5"));
    CHECK(f.root.at("segment") != "1");
    const auto ranges = parse_ranges(f.seqs.at("adc0"));
    if (ranges.empty()) continue;  // a rotation right after the last block leaves an empty last file
    REQUIRE(ranges.size() == 1);  // contiguous within a file...
    CHECK(ranges[0].first == next);  // ...and across files
    next = ranges[0].second + 1;
    CHECK(f.channels.at("adc0").at("gaps") == "0");
  }
  CHECK(next == 320);
}

TEST_CASE("rotation by time splits a recording that --duration ends cleanly" * doctest::timeout(30)) {
  ScratchArena scratch("rectime");
  TempDir dir;
  const acq::SimOptions sim = sim_options({"adc0"}, 1000, 0, 100'000);
  make_channels(scratch.arena(), sim);
  Program recorder = Program::start(record_argv(
      scratch.name(), {"--channels", "adc0", "--out", dir.str(), "--rotate-s", "0.4", "--duration", "1.3", "--json"}));
  REQUIRE(wait_for_recorder(scratch.arena(), recorder, 1, dir.path()));
  SimWriter writer(scratch.arena(), sim);
  const Exit done = recorder.wait();
  writer.stop();
  INFO(done.err);
  CHECK(done.code == 0);
  CHECK(contains(done.out, "\"stopped_by\":\"duration\""));
  const auto files = h5_files(dir.path());
  CHECK(files.size() >= 3);
  CHECK(files.size() <= 5);
  std::uint64_t next = 0;
  bool first = true;
  for (const Facts& f : inspect_all(files)) {
    REQUIRE(f.ok());
    CHECK(f.root.at("stop_time") != "-");
    for (const auto& [from, to] : parse_ranges(f.seqs.at("adc0"))) {
      if (!first) CHECK(from == next);  // no block lost between files
      first = false;
      next = to + 1;
    }
  }
  CHECK(next > 0);
}

TEST_CASE("SIGHUP closes the segment with its stop_time and continues in the next" * doctest::timeout(30)) {
  ScratchArena scratch("rechup");
  TempDir dir;
  const acq::SimOptions sim = sim_options({"adc0"}, 1000, 0, 100'000);
  make_channels(scratch.arena(), sim);
  Program recorder = Program::start(record_argv(scratch.name(), {"--channels", "adc0", "--out", dir.str(), "--flush-ms", "100"}));
  REQUIRE(wait_for_recorder(scratch.arena(), recorder, 1, dir.path()));
  SimWriter writer(scratch.arena(), sim);
  REQUIRE(eventually([&] { return recorder_blocks_read(scratch.arena(), "adc0", recorder.pid()) >= 20; }));
  recorder.signal(SIGHUP);
  REQUIRE(eventually([&] { return h5_files(dir.path()).size() == 2; }));
  const std::uint64_t at_rotation = recorder_blocks_read(scratch.arena(), "adc0", recorder.pid());
  REQUIRE(eventually([&] { return recorder_blocks_read(scratch.arena(), "adc0", recorder.pid()) >= at_rotation + 20; }));
  writer.stop();
  recorder.signal(SIGTERM);
  const Exit done = recorder.wait();
  INFO(done.err);
  CHECK(done.code == 0);
  const auto files = h5_files(dir.path());
  REQUIRE(files.size() == 2);
  const std::vector<Facts> facts = inspect_all(files);
  const Facts &first = facts[0], &second = facts[1];
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK(first.root.at("stop_time") != "-");
  CHECK(first.root.at("stop_time") <= second.root.at("start_time"));
  const auto a = parse_ranges(first.seqs.at("adc0")), b = parse_ranges(second.seqs.at("adc0"));
  REQUIRE(a.size() == 1);
  REQUIRE(b.size() == 1);
  CHECK(b[0].first == a[0].second + 1);
}

TEST_CASE("a channel created while recording starts a new segment that holds it from its first block" *
          doctest::timeout(30)) {
  ScratchArena scratch("recnew");
  TempDir dir;
  const acq::SimOptions first = sim_options({"adc0"}, 1000, 0, 100'000);
  make_channels(scratch.arena(), first);
  Program recorder = Program::start(record_argv(scratch.name(), {"--channels", "adc*", "--out", dir.str()}));
  REQUIRE(wait_for_recorder(scratch.arena(), recorder, 1, dir.path()));
  SimWriter a(scratch.arena(), first);
  std::this_thread::sleep_for(200ms);
  acq::SimOptions second = sim_options({"adc1"}, 500, 0, 50'000);
  second.signal.seed = 7;
  make_channels(scratch.arena(), second);
  SimWriter b(scratch.arena(), second);
  REQUIRE(eventually([&] { return recorder_rows(scratch.arena(), recorder.pid()) == 2; }));
  REQUIRE(eventually([&] { return recorder_blocks_read(scratch.arena(), "adc1", recorder.pid()) >= 20; }));
  a.stop();
  b.stop();
  recorder.signal(SIGTERM);
  const Exit done = recorder.wait();
  INFO(done.err);
  CHECK(done.code == 0);
  CHECK(contains(done.err, "channel 'adc1' appeared"));
  const auto files = h5_files(dir.path());
  REQUIRE(files.size() == 2);
  TempDir exported;
  const std::vector<Facts> facts = inspect_all(files, false, exported.str());
  const Facts &before = facts[0], &after = facts[1];
  REQUIRE(before.ok());
  REQUIRE(after.ok());
  CHECK(before.channels.count("adc1") == 0);
  REQUIRE(after.channels.count("adc1") == 1);
  const auto a0 = parse_ranges(before.seqs.at("adc0")), a1 = parse_ranges(after.seqs.at("adc0"));
  REQUIRE(a0.size() == 1);
  REQUIRE(a1.size() == 1);
  CHECK(a1[0].first == a0[0].second + 1);  // no block of adc0 lost to the rotation
  const auto b1 = parse_ranges(after.seqs.at("adc1"));
  REQUIRE(b1.size() == 1);
  CHECK(b1[0].first == 0);  // from the new channel's first block
  check_samples(after, (exported.path() / "1").string(), second, 0);
}

}  // TEST_SUITE

// What format 1.1 adds to a recording, read back with h5py (check_recording.py): text as
// variable-length UTF-8 everywhere and text keys whole, every channel's time axis.
#include <doctest/doctest.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "harness.hpp"
#include "live_arena.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/recorder/recorder.hpp"

using namespace weir;
using namespace weir::test;

namespace {

constexpr std::uint32_t kBlock = 256;
constexpr std::uint64_t kBlocks = 200;

/// check_recording.py CHECK FILE ARGS...
Exit check_recording(const std::string& check, const std::string& file, std::vector<std::string> args = {}) {
  std::vector<std::string> argv{WEIR_PYTHON, std::string(WEIR_RECORDER_SCRIPTS) + "/check_recording.py", check, file};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program(argv);
}

/// record() in a thread of this process until stop().
class InProcessRecorder {
 public:
  InProcessRecorder(const core::Arena& arena, rec::RecordOptions options) : options_(std::move(options)) {
    thread_ = std::thread([this, &arena] { summary_ = rec::record(arena, options_, control_); });
    REQUIRE(eventually([&] { return control_.started.load(); }));
  }
  InProcessRecorder(const InProcessRecorder&) = delete;
  InProcessRecorder& operator=(const InProcessRecorder&) = delete;
  ~InProcessRecorder() { (void)stop(); }
  const core::Result<rec::RecordSummary>& stop() {
    control_.stop = true;
    if (thread_.joinable()) thread_.join();
    return summary_;
  }

 private:
  rec::RecordOptions options_;
  rec::RecordControl control_;
  core::Result<rec::RecordSummary> summary_ = core::fail(core::Errc::not_ready, "not run");
  std::thread thread_;
};

}  // namespace

TEST_SUITE("recorders.stream.format") {

TEST_CASE("every text attribute and text dataset is variable-length UTF-8, and a long text key is logged whole" *
          doctest::timeout(30)) {
  ScratchArena scratch("recfmt");
  TempDir dir;
  const acq::SimOptions sim = sim_options({"adc0"}, kBlock, kBlocks);
  make_channels(scratch.arena(), sim);
  core::KvStore kv(scratch.arena());
  std::string text;  // longer than format 1.0's 256-byte cut, and not ASCII
  while (text.size() < 1000) text += "Spannung über Kanal " + std::to_string(text.size()) + "; ";
  REQUIRE(kv.set_text("run.note", "first") == core::KvStatus::ok);

  rec::RecordOptions options;
  options.channels = {"adc0"};
  options.keys = {"run.*"};
  options.out = dir.str();
  options.flush_ms = 50;
  InProcessRecorder recorder(scratch.arena(), options);
  {
    SimWriter writer(scratch.arena(), sim);
    CHECK(writer.finish().blocks_published == kBlocks);
  }
  REQUIRE(kv.set_text("run.note", text) == core::KvStatus::ok);
  std::this_thread::sleep_for(300ms);  // the recorder samples the key at its next look
  const auto& summary = recorder.stop();
  REQUIRE(summary);
  REQUIRE(summary->files.size() == 1);
  const std::string expected = (dir.path() / "note.txt").string();
  std::ofstream(expected, std::ios::binary) << text;
  const Exit checked = check_recording("strings", summary->files[0], {"run.note", expected});
  INFO(checked.out << checked.err);
  CHECK(checked.code == 0);
  CHECK(contains(checked.out, "ok key run.note bytes " + std::to_string(text.size())));
}

TEST_CASE("every channel's NXdata has a time axis matching its block stamps, and silx's NeXus attributes" *
          doctest::timeout(30)) {
  ScratchArena scratch("recaxis");
  TempDir dir;
  const acq::SimOptions sim = sim_options({"adc0", "adc1"}, kBlock, 0, 100'000);  // paced: real stamps
  make_channels(scratch.arena(), sim);
  rec::RecordOptions options;
  options.channels = {"adc*"};
  options.out = dir.str();
  options.flush_ms = 50;
  InProcessRecorder recorder(scratch.arena(), options);
  {
    SimWriter writer(scratch.arena(), sim);
    std::this_thread::sleep_for(500ms);
  }
  const auto& summary = recorder.stop();
  REQUIRE(summary);
  REQUIRE(summary->files.size() == 1);
  // The simulator stamps each block at its nominal time, so every block lies on the axis.
  const Exit checked = check_recording("axes", summary->files[0], {"1e-6"});
  INFO(checked.out << checked.err);
  CHECK(checked.code == 0);
  CHECK(contains(checked.out, "ok axes adc0 "));
  CHECK(contains(checked.out, "ok axes adc1 "));
}

TEST_CASE("each file records its clock provenance: the host's synchronisation and the realtime - monotonic "
          "offset at open and close" *
          doctest::timeout(30)) {
  ScratchArena scratch("recclock");
  TempDir dir;
  const acq::SimOptions sim = sim_options({"adc0"}, kBlock, 0, 100'000);
  make_channels(scratch.arena(), sim);
  rec::RecordOptions options;
  options.channels = {"adc0"};
  options.out = dir.str();
  options.flush_ms = 50;
  InProcessRecorder recorder(scratch.arena(), options);
  {
    SimWriter writer(scratch.arena(), sim);
    std::this_thread::sleep_for(300ms);
  }
  const auto& summary = recorder.stop();
  REQUIRE(summary);
  REQUIRE(summary->files.size() == 1);
  const Exit checked = check_recording("clock", summary->files[0]);
  INFO(checked.out << checked.err);
  CHECK(checked.code == 0);
  CHECK(contains(checked.out, "ok clock source "));
  CHECK(contains(checked.out, "ok steps adc0 []"));
}

TEST_CASE("a block stamped earlier than the one before it is recorded as a clock step") {
  ScratchArena scratch("recstep");
  TempDir dir;
  const acq::SimOptions sim = sim_options({"adc0"}, kBlock, 0);
  make_channels(scratch.arena(), sim);
  rec::RecordOptions options;
  options.channels = {"adc0"};
  options.out = dir.str();
  options.flush_ms = 50;
  InProcessRecorder recorder(scratch.arena(), options);
  constexpr std::uint64_t kRealtime0 = 1'700'000'000'000'000'000, kMonotonic0 = 5'000'000'000, kPeriod = 2'560'000;
  constexpr std::uint64_t kStep = 2'000'000'000;  // the clock steps back 2 s before block 5
  {
    auto writer = core::ChannelWriter::open(scratch.arena(), "adc0");
    REQUIRE(writer);
    for (std::uint64_t i = 0; i < 10; ++i) {
      std::span<std::byte> slot;
      REQUIRE(writer->claim(slot) == core::ClaimStatus::ok);
      std::fill(slot.begin(), slot.end(), std::byte{0});
      writer->publish(kBlock, kRealtime0 + i * kPeriod - (i >= 5 ? kStep : 0), kMonotonic0 + i * kPeriod);
    }
  }
  REQUIRE(eventually([&] { return recorder_blocks_read(scratch.arena(), "adc0", getpid()) == 10; }));
  const auto& summary = recorder.stop();
  REQUIRE(summary);
  REQUIRE(summary->files.size() == 1);
  const std::string jump = std::to_string(static_cast<std::int64_t>(kPeriod) - static_cast<std::int64_t>(kStep));
  const Exit checked = check_recording("clock", summary->files[0], {"adc0", "5", jump});
  INFO(checked.out << checked.err);
  CHECK(checked.code == 0);
  CHECK(contains(checked.out, "ok steps adc0 [(5, " + jump + ")]"));
}

}  // TEST_SUITE

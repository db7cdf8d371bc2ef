// What format 1.1 adds to a recording, read back with h5py (check_recording.py): text as
// variable-length UTF-8 everywhere and text keys whole, every channel's time axis.
#include <doctest/doctest.h>

#include <array>
#include <atomic>
#include <fstream>
#include <span>
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

// Records `channels`, simulated at 100 kHz on paced (real) clock stamps, for `run_for` into one file
// under `dir`; returns its path.
std::string record_paced(const ScratchArena& scratch, const TempDir& dir, const std::vector<std::string>& channels,
                         std::chrono::milliseconds run_for) {
  const acq::SimOptions sim = sim_options(channels, kBlock, 0, 100'000);
  make_channels(scratch.arena(), sim);
  rec::RecordOptions options;
  options.channels = channels;
  options.out = dir.str();
  options.flush_ms = 50;
  InProcessRecorder recorder(scratch.arena(), options);
  {
    SimWriter writer(scratch.arena(), sim);
    std::this_thread::sleep_for(run_for);
  }
  const auto& summary = recorder.stop();
  REQUIRE(summary);
  REQUIRE(summary->files.size() == 1);
  return summary->files[0];
}

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
  const std::string file = record_paced(scratch, dir, {"adc0", "adc1"}, 500ms);
  // The simulator stamps each block at its nominal time, so every block lies on the axis.
  const Exit checked = check_recording("axes", file, {"1e-6"});
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
  const std::string file = record_paced(scratch, dir, {"adc0"}, 300ms);
  const Exit checked = check_recording("clock", file);
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

TEST_CASE("each channel says which clock stamped its blocks: the source's (packet times) or the host's") {
  ScratchArena scratch("recsrcclk");
  TempDir dir;
  const acq::SimOptions sim = sim_options({"src", "host", "mix"}, kBlock, 0);
  make_channels(scratch.arena(), sim);
  rec::RecordOptions options;
  options.channels = {"src", "host", "mix"};
  options.out = dir.str();
  options.flush_ms = 50;
  InProcessRecorder recorder(scratch.arena(), options);
  constexpr std::uint64_t kRealtime0 = 1'700'000'000'000'000'000, kPeriod = 2'560'000;
  // src: every block stamped by the source's clock; host: none; mix: every other one.
  const std::array<std::pair<const char*, int>, 3> channels{{{"src", 1}, {"host", 0}, {"mix", 2}}};
  for (const auto& [name, every] : channels) {
    auto writer = core::ChannelWriter::open(scratch.arena(), name);
    REQUIRE(writer);
    for (std::uint64_t i = 0; i < 10; ++i) {
      std::span<std::byte> slot;
      REQUIRE(writer->claim(slot) == core::ClaimStatus::ok);
      std::fill(slot.begin(), slot.end(), std::byte{0});
      const bool source = every == 1 || (every == 2 && i % 2 == 0);
      // Bits of the driver's own beside bit 0 change nothing.
      writer->publish(kBlock, kRealtime0 + i * kPeriod, 0, (source ? core::kBlockSourceTimeFlag : 0U) | (1U << 5));
    }
  }
  for (const auto& [name, every] : channels)
    REQUIRE(eventually([&] { return recorder_blocks_read(scratch.arena(), name, getpid()) == 10; }));
  const auto& summary = recorder.stop();
  REQUIRE(summary);
  REQUIRE(summary->files.size() == 1);
  const Exit checked = check_recording("sample_clock", summary->files[0]);
  INFO(checked.out << checked.err);
  CHECK(checked.code == 0);
  CHECK(contains(checked.out, "ok sample_clock src source"));
  CHECK(contains(checked.out, "ok sample_clock host host"));
  CHECK(contains(checked.out, "ok sample_clock mix mixed"));
}

}  // TEST_SUITE

TEST_SUITE("recorders.stream.format") {

TEST_CASE("an array key is logged in its dtype and shape; another shape is refused and counted; a key that "
          "becomes an array starts a new file" *
          doctest::timeout(30)) {
  ScratchArena scratch("recarray");
  TempDir dir;
  const acq::SimOptions sim = sim_options({"adc0"}, kBlock, 0, 100'000);
  make_channels(scratch.arena(), sim);
  core::KvStore kv(scratch.arena());
  const core::ArrayShape grid{core::Dtype::f64, 2, {2, 3}};
  std::array<double, 6> values{};
  const auto put = [&](double base) {
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = base + static_cast<double>(i);
    return kv.set_array("arr.grid", grid, std::as_bytes(std::span(values)));
  };
  REQUIRE(put(0) == core::KvStatus::ok);
  REQUIRE(kv.set_u64("arr.later", 1) == core::KvStatus::ok);  // a number when the first file opens
  rec::RecordOptions options;
  options.channels = {"adc0"};
  options.keys = {"arr.*"};
  options.out = dir.str();
  options.flush_ms = 50;
  InProcessRecorder recorder(scratch.arena(), options);
  SimWriter writer(scratch.arena(), sim);
  std::this_thread::sleep_for(200ms);
  REQUIRE(put(10) == core::KvStatus::ok);
  std::this_thread::sleep_for(200ms);
  const std::array<double, 2> other{1, 2};  // another shape: refused in this file
  REQUIRE(kv.set_array("arr.grid", core::ArrayShape{core::Dtype::f64, 1, {2, 0}}, std::as_bytes(std::span(other))) ==
          core::KvStatus::ok);
  std::this_thread::sleep_for(200ms);
  REQUIRE(put(20) == core::KvStatus::ok);
  std::this_thread::sleep_for(200ms);
  const std::array<std::int16_t, 4> later{1, -2, 3, -4};
  REQUIRE(kv.set_array("arr.later", core::ArrayShape{core::Dtype::i16, 1, {4, 0}}, std::as_bytes(std::span(later))) ==
          core::KvStatus::ok);
  std::this_thread::sleep_for(400ms);
  const auto& summary = recorder.stop();
  REQUIRE(summary);
  REQUIRE(summary->files.size() == 2);
  const std::string script =
      "import sys, h5py, numpy as np\n"
      "a = h5py.File(sys.argv[1], 'r')['entry/keys']\n"
      "g = a['arr.grid']\n"
      "v = g['value']\n"
      "assert v.dtype == np.float64 and v.shape == (3, 2, 3), v\n"
      "assert np.array_equal(v[:, 0, 0], [0, 10, 20]) and np.array_equal(v[2].ravel(), np.arange(6) + 20), v[:]\n"
      "assert v.attrs['dtype'] == 'f64' and list(v.attrs['shape']) == [2, 3]\n"
      "assert int(g.attrs['refused_rows']) == 1 and g['time'].shape == (3,)\n"
      "assert a['arr.later/value'].dtype == np.uint64\n"
      "b = h5py.File(sys.argv[2], 'r')['entry/keys']\n"
      "w = b['arr.later/value']\n"
      "assert w.dtype == np.int16 and np.array_equal(w[-1], [1, -2, 3, -4]), w[:]\n"
      "assert b['arr.grid/value'].shape[1:] == (2, 3)\n"
      "print('ok arrays')\n";
  const Exit checked = run_program({WEIR_PYTHON, "-c", script, summary->files[0], summary->files[1]});
  INFO(checked.out << checked.err);
  CHECK(checked.code == 0);
  CHECK(contains(checked.out, "ok arrays"));
}

}  // TEST_SUITE

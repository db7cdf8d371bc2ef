// The recorder as a library, in one process: a simulator thread publishes, record() writes, and
// the file is read back through the HDF5 C API and compared with the regenerated signal.
#include <doctest/doctest.h>

#include <hdf5.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

#include "harness.hpp"
#include "live_arena.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/bench/recorder_bench.hpp"
#include "weir/h5/handle.hpp"
#include "weir/recorder/recorder.hpp"

using namespace weir;
using namespace weir::test;

namespace {

constexpr std::uint32_t kBlock = 512;
constexpr double kRate = 1e6;
constexpr std::uint64_t kBlocks = 300;

template <class T>
std::vector<T> read_dataset(hid_t file, const std::string& path, hid_t type) {
  h5::Dataset d{H5Dopen2(file, path.c_str(), H5P_DEFAULT)};
  REQUIRE_MESSAGE(d.valid(), path);
  h5::Space space{H5Dget_space(d.get())};
  hsize_t dims[2] = {0, 1};  // 1-D tables; data (format 2) rows of a block each, read row after row
  const int rank = H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  REQUIRE((rank == 1 || rank == 2));
  const hsize_t n = dims[0] * (rank == 2 ? dims[1] : 1);
  std::vector<T> out(n);
  if (n > 0) REQUIRE(H5Dread(d.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) >= 0);
  return out;
}

acq::SimOptions sim_options(std::vector<std::string> channels, std::uint64_t blocks) {
  acq::SimOptions o;
  o.channels = std::move(channels);
  o.rate_hz = kRate;
  o.block_samples = kBlock;
  o.signal.kind = acq::SignalKind::noise;
  o.signal.seed = 1234;
  o.max_blocks = blocks;
  o.fast = true;
  return o;
}

void create_channels(const core::Arena& arena, const acq::SimOptions& o) {
  for (const std::string& name : o.channels) {
    core::ChannelSpec spec;
    spec.name = name;
    spec.rate_hz = o.rate_hz;
    spec.samples_per_block = o.block_samples;
    spec.units = "V";
    REQUIRE(core::create_channel(arena, spec));
  }
}

}  // namespace

TEST_SUITE("recorders.stream.record") {

TEST_CASE("record() writes every published block and each sampled key change, and stops on request" *
          doctest::timeout(30)) {
  ScratchArena scratch("rec");
  TempDir dir;
  const acq::SimOptions sim = sim_options({"adc0", "adc1"}, kBlocks);
  create_channels(scratch.arena(), sim);
  core::KvStore kv(scratch.arena());
  REQUIRE(kv.set_f64("temp.stage", 20.5) == core::KvStatus::ok);

  rec::RecordOptions options;
  options.channels = {"adc*"};
  options.keys = {"temp.*"};
  options.out = dir.str();
  options.flush_ms = 50;
  rec::RecordControl control;
  core::Result<rec::RecordSummary> summary = core::fail(core::Errc::not_ready, "not run");
  std::thread recorder([&] { summary = rec::record(scratch.arena(), options, control); });
  const auto deadline = Clock::now() + kReadyTimeout;
  while (!control.started && Clock::now() < deadline) std::this_thread::sleep_for(kPoll);
  REQUIRE(control.started);
  {
    SimWriter writer(scratch.arena(), sim);
    for (const double t : {21.0, 21.5, 22.25}) {
      std::this_thread::sleep_for(100ms);  // the recorder wakes on the key's group and samples each value
      REQUIRE(kv.set_f64("temp.stage", t) == core::KvStatus::ok);
    }
    CHECK(writer.finish().blocks_published == kBlocks * 2);
  }
  std::this_thread::sleep_for(100ms);
  control.stop = true;
  recorder.join();
  REQUIRE(summary);
  CHECK(summary->error == "");
  CHECK(summary->stopped_by == "request");
  CHECK(summary->blocks == kBlocks * 2);
  CHECK(summary->gaps == 0);
  REQUIRE(summary->files.size() == 1);

  h5::File f{H5Fopen(summary->files[0].c_str(), H5F_ACC_RDONLY, H5P_DEFAULT)};
  REQUIRE(f.valid());
  for (std::size_t c = 0; c < sim.channels.size(); ++c) {
    const std::string base = "/entry/" + sim.channels[c];
    const auto data = read_dataset<float>(f.get(), base + "/data", H5T_NATIVE_FLOAT);
    const auto seq = read_dataset<std::uint64_t>(f.get(), base + "/block_sequence", H5T_NATIVE_UINT64);
    REQUIRE(seq.size() == kBlocks);
    CHECK(seq.front() == 0);
    CHECK(seq.back() == kBlocks - 1);
    REQUIRE(data.size() == kBlocks * kBlock);
    const std::vector<float> expected = reference_samples(sim, c, 0, kBlocks * kBlock);
    CHECK(std::memcmp(data.data(), expected.data(), data.size() * sizeof(float)) == 0);
  }
  const auto values = read_dataset<double>(f.get(), "/entry/keys/temp.stage/value", H5T_NATIVE_DOUBLE);
  const auto times = read_dataset<double>(f.get(), "/entry/keys/temp.stage/time", H5T_NATIVE_DOUBLE);
  // The first value is logged when the file opens and the last when it changes; a change between
  // two looks of a recorder starved of CPU would be one row, so the middle ones are only expected.
  REQUIRE(values.size() >= 2);
  CHECK(values.front() == 20.5);
  CHECK(values.back() == 22.25);
  CHECK(std::is_sorted(values.begin(), values.end()));
  WARN(values.size() == 4);
  REQUIRE(times.size() == values.size());
  CHECK(times.front() >= 0);
  CHECK(times.back() > times.front());

  // The consumer rows carried the recorder's counters while it ran; the summary holds the totals.
  CHECK(summary->channels[0].bytes == kBlocks * kBlock * sizeof(float));
}

TEST_CASE("the same blocks recorded by direct chunk writes and through H5Dwrite give identical datasets" *
          doctest::timeout(30)) {
  ScratchArena scratch("recd");
  TempDir dir;
  constexpr std::uint64_t kHeld = 1000;  // more than 7 whole chunks of 128 blocks, and a partial one
  const acq::SimOptions sim = sim_options({"adc0", "adc1"}, kHeld);
  for (const std::string& name : sim.channels) {
    core::ChannelSpec spec;
    spec.name = name;
    spec.rate_hz = sim.rate_hz;
    spec.samples_per_block = sim.block_samples;
    spec.ring_blocks = 1024;  // holds every block: both recordings read the same ones from the ring
    REQUIRE(core::create_channel(scratch.arena(), spec));
  }
  {
    SimWriter writer(scratch.arena(), sim);
    CHECK(writer.finish().blocks_published == kHeld * 2);
  }
  std::vector<std::string> files;
  for (const bool staged : {true, false}) {
    rec::RecordOptions options;
    options.channels = {"adc*"};
    options.out = (dir.path() / (staged ? "staged.h5" : "direct.h5")).string();
    options.from_oldest = true;
    options.flush_ms = 1;  // flushes in the middle of chunks: those chunks take the H5Dwrite path either way
    options.staged_writes = staged;
    rec::RecordControl control;
    control.stop = true;  // drains every block the rings hold, then stops
    auto summary = rec::record(scratch.arena(), options, control);
    REQUIRE_MESSAGE(summary, (summary ? "" : summary.error().what));
    CHECK(summary->error == "");
    CHECK(summary->blocks == kHeld * 2);
    REQUIRE(summary->files.size() == 1);
    files.push_back(summary->files[0]);
  }
  h5::File staged{H5Fopen(files[0].c_str(), H5F_ACC_RDONLY, H5P_DEFAULT)};
  h5::File direct{H5Fopen(files[1].c_str(), H5F_ACC_RDONLY, H5P_DEFAULT)};
  REQUIRE(staged.valid());
  REQUIRE(direct.valid());
  for (std::size_t c = 0; c < sim.channels.size(); ++c) {
    const std::string base = "/entry/" + sim.channels[c];
    const auto data = read_dataset<float>(direct.get(), base + "/data", H5T_NATIVE_FLOAT);
    REQUIRE(data.size() == kHeld * kBlock);
    CHECK(data == read_dataset<float>(staged.get(), base + "/data", H5T_NATIVE_FLOAT));
    const std::vector<float> expected = reference_samples(sim, c, 0, kHeld * kBlock);
    CHECK(std::memcmp(data.data(), expected.data(), data.size() * sizeof(float)) == 0);
    for (const char* table : {"block_sequence", "block_offset", "block_realtime_ns", "block_monotonic_ns"})
      CHECK_MESSAGE(read_dataset<std::uint64_t>(direct.get(), base + "/" + table, H5T_NATIVE_UINT64) ==
                        read_dataset<std::uint64_t>(staged.get(), base + "/" + table, H5T_NATIVE_UINT64),
                    table);
    for (const char* table : {"block_samples", "block_flags"})
      CHECK_MESSAGE(read_dataset<std::uint32_t>(direct.get(), base + "/" + table, H5T_NATIVE_UINT32) ==
                        read_dataset<std::uint32_t>(staged.get(), base + "/" + table, H5T_NATIVE_UINT32),
                    table);
  }
}

TEST_CASE("the benchmark hooks record the blocks they time" * doctest::timeout(30)) {
  TempDir dir;
  bench::RecorderBenchOptions o;
  o.dir = dir.str();
  o.blocks = 256;
  for (const bool prefill : {false, true})
  for (const std::uint32_t channels : {1U, 8U}) {
    CAPTURE(prefill);
    o.channels = channels;
    o.prefill = prefill;
    auto recorded = bench::bench_record(o);
    REQUIRE_MESSAGE(recorded, (recorded ? "" : recorded.error().what));
    auto bare = bench::bench_baseline(o);
    REQUIRE_MESSAGE(bare, (bare ? "" : bare.error().what));
    CHECK(recorded->bytes == std::uint64_t{channels} * o.blocks * o.block_bytes);
    CHECK(bare->bytes == recorded->bytes);
    CHECK(recorded->mb_per_s > 0);
    CHECK(bare->mb_per_s > 0);
    CHECK(recorded->file_bytes >= recorded->bytes);  // the samples really are in the file
    MESSAGE(channels << " channel(s)" << std::string(prefill ? ", prefilled" : "") << ": recorder " << recorded->mb_per_s << " MB/s, bare HDF5 loop " << bare->mb_per_s
                     << " MB/s");
  }
  CHECK(h5_files(dir.path()).empty());  // both remove their files
}

}  // TEST_SUITE

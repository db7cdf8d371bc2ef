// Compressed recording end to end: a real `weir record` encodes each channel's data chunks with the
// codec its --codec rule names, on its encoder threads, and every file reads back sample for sample
// with h5py (hdf5plugin), with plain h5py and h5dump (HDF5 loads the LZ4 and bitshuffle filters from
// its default plugin directory, where Debian's hdf5-filter-plugin and bitshuffle put them, with no
// setting), and the zstd channel, which no Debian plugin decodes, with weir's own filter classes.
#include <doctest/doctest.h>

#include <signal.h>

#include <cstring>
#include <numeric>

#include "harness.hpp"
#include "live_arena.hpp"
#include "weir/codec/codec.hpp"
#include "weir/h5/handle.hpp"

using namespace weir;
using namespace weir::test;

namespace {

constexpr std::uint32_t kBlock = 4096;   // 8 KiB of i16: 32 blocks a 256 KiB chunk
constexpr std::uint64_t kBlocks = 300;   // 9 whole chunks and a partial one per channel

// Detector-like ADC codes: the simulator's pulses on a baseline with a few LSB of noise.
acq::SimOptions detector_options(std::vector<std::string> names) {
  acq::SimOptions sim = sim_options(std::move(names), kBlock, kBlocks);
  sim.dtype = core::Dtype::i16;
  sim.signal.kind = acq::SignalKind::pulses;
  sim.signal.pulses.count_rate_hz = 20'000;
  sim.signal.pulses.baseline_noise = 0.001;
  return sim;
}

// Channel i's codes as the simulator made them (seed + i).
std::vector<std::byte> expected_codes(const acq::SimOptions& sim, std::size_t channel) {
  acq::SignalConfig config = sim.signal;
  config.sample_rate_hz = sim.rate_hz;
  config.seed = sim.signal.seed + channel;
  auto gen = acq::SignalGenerator::create(config, sim.block_samples);
  REQUIRE(gen);
  std::vector<std::byte> out(kBlocks * kBlock * sizeof(std::int16_t));
  for (std::uint64_t b = 0; b < kBlocks; ++b)
    (void)gen->fill(core::Dtype::i16, std::span<std::byte>(out).subspan(b * kBlock * sizeof(std::int16_t)), kBlock,
                    sim.full_scale_v);
  return out;
}

}  // namespace

TEST_SUITE("recorders.stream.codec") {

TEST_CASE("each channel goes through its codec and every file reads back exactly in h5py and h5dump" *
          doctest::timeout(90)) {
  ScratchArena scratch("reccodec");
  TempDir dir, exported;
  const std::vector<std::string> names{"raw0", "raw1", "raw2", "raw3", "raw4"};
  const acq::SimOptions sim = detector_options(names);
  make_channels(scratch.arena(), sim);
  Program recorder = Program::start(record_argv(
      scratch.name(), {"--channels", "raw*", "--out", dir.str(), "--flush-ms", "20", "--encode-threads", "2", "--codec",
                       "shuffle+lz4,raw1=bitshuffle+lz4,raw2=shuffle+deflate:1,raw3=none,raw4=zstd:3", "--json"}));
  REQUIRE(wait_for_recorder(scratch.arena(), recorder, names.size(), dir.path()));
  SimWriter writer(scratch.arena(), sim);
  CHECK(writer.finish().blocks_published == kBlocks * names.size());
  REQUIRE(eventually([&] {
    for (const std::string& n : names)
      if (recorder_blocks_read(scratch.arena(), n, recorder.pid()) < kBlocks) return false;
    return true;
  }));
  stop_cleanly(recorder);
  const auto files = h5_files(dir.path());
  REQUIRE(files.size() == 1);
  const Facts facts = inspect(files[0], false, exported.str());
  INFO(facts.exit.out << facts.exit.err);
  REQUIRE(facts.ok());
  const std::vector<std::string> filters{"shuffle+32004", "32008", "shuffle+gzip", "none", "32015"};
  for (std::size_t i = 0; i < names.size(); ++i) {
    CAPTURE(names[i]);
    const auto& c = facts.channels.at(names[i]);
    CHECK(c.at("filters") == filters[i]);
    CHECK(c.at("gaps") == "0");
    CHECK(facts.seqs.at(names[i]) == "0-299");
    std::string bytes;
    if (filters[i] == "32015") {
      // No Debian plugin decodes zstd: weir's own filter classes read it.
      CHECK(c.at("readable") == "32015");
      REQUIRE(codec::register_hdf5_filters());
      const h5::File f{H5Fopen(files[0].c_str(), H5F_ACC_RDONLY, H5P_DEFAULT)};
      REQUIRE(f.valid());
      const h5::Dataset d{H5Dopen2(f.get(), ("/entry/" + names[i] + "/data").c_str(), H5P_DEFAULT)};
      REQUIRE(d.valid());
      bytes.resize(kBlocks * kBlock * sizeof(std::int16_t));
      REQUIRE(H5Dread(d.get(), H5T_NATIVE_INT16, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()) >= 0);
    } else {
      CHECK(c.at("readable") == "yes");
      bytes = read_file(exported.path() / (names[i] + ".bin"));
    }
    const std::vector<std::byte> expected = expected_codes(sim, i);
    REQUIRE(bytes.size() == expected.size());
    CHECK(std::memcmp(bytes.data(), expected.data(), expected.size()) == 0);
  }
  // Plain h5py, no hdf5plugin, no plugin path set: deflate is HDF5's own, LZ4 and bitshuffle come
  // from the default plugin directory.
  const auto sum = [&](std::size_t channel) {
    const std::vector<std::byte> codes = expected_codes(sim, channel);
    std::int64_t total = 0;
    for (std::size_t k = 0; k < codes.size(); k += 2) {
      std::int16_t v = 0;
      std::memcpy(&v, codes.data() + k, sizeof v);
      total += v;
    }
    return total;
  };
  const Exit plain = run_program({WEIR_PYTHON, "-c",
                                  "import sys, h5py\n"
                                  "f = h5py.File(sys.argv[1], 'r')\n"
                                  "print(int(f['entry/raw0/data'][...].astype('int64').sum()))\n"
                                  "print(int(f['entry/raw1/data'][...].astype('int64').sum()))\n"
                                  "print(f['entry/raw2/data'].shape[0])\n",
                                  files[0]});
  INFO(plain.out << plain.err);
  REQUIRE(plain.code == 0);
  CHECK(plain.out == std::to_string(sum(0)) + "\n" + std::to_string(sum(1)) + "\n" + std::to_string(kBlocks) + "\n");
  // h5dump decodes the first row through the same plugin: the first codes, as the simulator made them.
  const Exit dump = run_program({WEIR_H5DUMP, "-p", "-d", "/entry/raw0/data", "-s", "0,0", "-c", "1,4", files[0]});
  INFO(dump.out << dump.err);
  CHECK(dump.code == 0);
  CHECK(contains(dump.out, "FILTER_ID 32004"));
  const std::vector<std::byte> codes = expected_codes(sim, 0);
  std::string first = "(0,0): ";
  for (int k = 0; k < 4; ++k) {
    std::int16_t v = 0;
    std::memcpy(&v, codes.data() + 2 * k, sizeof v);
    first += std::to_string(v) + (k < 3 ? ", " : "");
  }
  CHECK(contains(dump.out, first));
}

}  // TEST_SUITE

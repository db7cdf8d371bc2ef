#pragma once
// For the ledger tests: real runs recorded by the real recorder (weir::rec::record in a thread,
// the simulator publishing), and the edits that turn copies of their files into the faults the
// audit must find (a segment copied under another number, a deleted segment, gap-flagged blocks,
// extra gap rows, another arena incarnation).
#include <doctest/doctest.h>

#include <hdf5.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "live_arena.hpp"
#include "scratch_dir.hpp"
#include "weir/acq/sim_driver.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"
#include "weir/h5/attribute.hpp"
#include "weir/h5/handle.hpp"
#include "weir/h5/recording_format.hpp"
#include "weir/recorder/recorder.hpp"

namespace weir::test {

using namespace std::chrono_literals;

inline constexpr std::uint32_t kBlockSamples = 64;
inline constexpr auto kWait = 20s;  // bound on every wait for the recorder

/// Blocks this process's recorder has read from `channel` (its consumer row).
inline std::uint64_t blocks_read(const core::Arena& arena, const std::string& channel) {
  for (const core::ChannelInfo& c : core::list_channels(arena))
    if (c.name == channel)
      for (const core::ConsumerInfo& r : c.consumers)
        if (r.alive && r.pid == static_cast<std::uint32_t>(getpid()) && r.kind == "record:hdf5") return r.blocks_read;
  return 0;
}

/// Waits until pred() holds, polling, for at most kWait.
template <class Pred>
bool within_wait(Pred pred) {
  const auto deadline = std::chrono::steady_clock::now() + kWait;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return pred();
}

/// Creates `channels` (lossless writers wait for the recorder) and publishes `blocks` blocks on
/// each, as fast as the recorder reads them.
inline void publish(const core::Arena& arena, const std::vector<std::string>& channels, std::uint64_t blocks) {
  acq::SimOptions o;
  o.channels = channels;
  o.rate_hz = 1e6;
  o.block_samples = kBlockSamples;
  o.signal.kind = acq::SignalKind::noise;
  o.max_blocks = blocks;
  o.fast = true;
  o.ring_blocks = 32;
  o.wait_timeout_ns = 10'000'000'000;
  auto report = acq::run_sim(arena, o, std::atomic<bool>{false});
  REQUIRE_MESSAGE(report, (report ? "" : report.error().what));
}

/// Records run `run` of a fresh arena into `out` (a directory, or FILE.h5): `segments` segments,
/// each holding the next `blocks` blocks of every channel (the recorder rotates between them).
/// Returns the arena's name.
inline std::string record_run(const std::string& out, std::uint64_t run, const std::vector<std::string>& channels,
                              int segments, std::uint64_t blocks) {
  ScratchArena scratch("ledger");
  for (const std::string& name : channels) {
    core::ChannelSpec spec;
    spec.name = name;
    spec.rate_hz = 1e6;
    spec.samples_per_block = kBlockSamples;
    spec.ring_blocks = 32;
    spec.wait_timeout_ns = 10'000'000'000;
    REQUIRE(core::create_channel(scratch.arena(), spec));
  }
  rec::RecordOptions options;
  options.channels = channels;
  options.out = out;
  options.run = run;
  options.flush_ms = 20;
  rec::RecordControl control;
  core::Result<rec::RecordSummary> summary = core::fail(core::Errc::not_ready, "not run");
  std::thread recorder([&] { summary = rec::record(scratch.arena(), options, control); });
  const bool started = within_wait([&] { return control.started.load(); });
  for (int s = 0; s < segments && started; ++s) {
    if (s > 0) {
      control.rotate = true;
      REQUIRE(within_wait([&] { return !control.rotate.load(); }));
    }
    publish(scratch.arena(), channels, blocks);
    for (const std::string& c : channels)
      REQUIRE(within_wait([&] { return blocks_read(scratch.arena(), c) == blocks * static_cast<std::uint64_t>(s + 1); }));
  }
  control.stop = true;
  recorder.join();
  REQUIRE(started);
  REQUIRE_MESSAGE(summary, (summary ? "" : summary.error().what));
  REQUIRE(summary->files.size() == static_cast<std::size_t>(segments));
  // The recorder keeps a run record beside its files; these runs are read from the files alone.
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(summary->files.front()).parent_path()))
    if (e.path().string().find(".ledger.json") != std::string::npos) std::filesystem::remove(e.path());
  return scratch.name();
}

/// A file of the recording opened for writing (no SWMR), closed at scope end.
struct EditFile {
  h5::File file;
  explicit EditFile(const std::filesystem::path& path) : file(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)) {
    REQUIRE_MESSAGE(file.valid(), path.string());
  }
};

/// Sets `value` (kBlockGapFlag, and a reason in the low 8 bits) as the flags of rows [from, from + count) of a
/// channel's block_flags.
inline void flag_gap_blocks(const std::filesystem::path& path, const std::string& channel, hsize_t from, hsize_t count,
                            std::uint32_t value = core::kBlockGapFlag) {
  EditFile f(path);
  h5::Dataset flags{H5Dopen2(f.file.get(), ("/entry/" + channel + "/block_flags").c_str(), H5P_DEFAULT)};
  REQUIRE(flags.valid());
  h5::Space space{H5Dget_space(flags.get())};
  std::vector<std::uint32_t> values(count, value);
  h5::Space memory{H5Screate_simple(1, &count, nullptr)};
  REQUIRE(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, &from, nullptr, &count, nullptr) >= 0);
  REQUIRE(H5Dwrite(flags.get(), H5T_NATIVE_UINT32, memory.get(), space.get(), H5P_DEFAULT, values.data()) >= 0);
}

/// Appends a row to a channel's gaps table (as the recorder writes them: packed GapRow).
inline void add_gap_row(const std::filesystem::path& path, const std::string& channel, std::uint64_t sequence,
                        std::uint64_t blocks, h5::GapReason reason) {
  EditFile f(path);
  h5::Dataset gaps{H5Dopen2(f.file.get(), ("/entry/" + channel + "/gaps").c_str(), H5P_DEFAULT)};
  REQUIRE(gaps.valid());
  hsize_t n = 0;
  {
    h5::Space space{H5Dget_space(gaps.get())};
    REQUIRE(H5Sget_simple_extent_dims(space.get(), &n, nullptr) == 1);
  }
  const hsize_t size = n + 1;
  REQUIRE(H5Dset_extent(gaps.get(), &size) >= 0);
  h5::Space space{H5Dget_space(gaps.get())};
  const hsize_t one = 1;
  h5::Space memory{H5Screate_simple(1, &one, nullptr)};
  REQUIRE(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, &n, nullptr, &one, nullptr) >= 0);
  const h5::GapRow row{sequence, blocks, static_cast<std::uint8_t>(reason), 0};
  const h5::Type type = h5::gap_row_type(false);
  REQUIRE(H5Dwrite(gaps.get(), type.get(), memory.get(), space.get(), H5P_DEFAULT, &row) >= 0);
}

/// Rewrites a root u64 attribute (arena_created_ns: another incarnation; segment).
inline void set_root_u64(const std::filesystem::path& path, const char* name, std::uint64_t value) {
  EditFile f(path);
  REQUIRE(h5::rewrite_u64(f.file.get(), name, value));
}

/// dir/<arena>_run<RUN>_<SEG>.h5, as the recorder names segments.
inline std::filesystem::path segment_file(const std::filesystem::path& dir, const std::string& arena, std::uint64_t run,
                                          std::uint64_t segment) {
  char name[64];
  std::snprintf(name, sizeof name, "_run%06llu_%04llu.h5", static_cast<unsigned long long>(run),
                static_cast<unsigned long long>(segment));
  return dir / (arena + name);
}

}  // namespace weir::test

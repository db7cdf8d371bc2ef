// `weir bench recorder`: the HDF5 recorder following 1 and 8 channels of 4 KiB f32 blocks (1 GiB in
// all, SWMR on) against a bare HDF5 loop appending the same blocks with the same chunks in this
// binary and against plain write() of the same bytes to the same directory, its data chunks written
// directly (H5Dwrite_chunk) and, for comparison, through H5Dwrite; the recorder's own drain rate (the largest input rate it can hold losslessly); and the
// time of an HDF5 snapshot of a 1 GiB arena.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "codec_cases.hpp"
#include "recorder_codec_cases.hpp"
#include "extra_suites.hpp"
#include "harness.hpp"
#include "suite_report.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"
#include "weir/bench/recorder_bench.hpp"
#include "weir/snapshot/snapshot.hpp"

namespace weir::bench {

namespace {

constexpr std::uint64_t kTotalBytes = 1ULL << 30;        // recorded per case
constexpr std::uint64_t kQuickTotalBytes = 64ULL << 20;  // ... with --quick
constexpr std::uint64_t kDrainBytes = 256ULL << 20;      // published first, then drained by the recorder
constexpr std::uint32_t kBlockBytes = 4096;
constexpr std::uint64_t kFsyncBytes = 1ULL << 30;         // recorded per case of the fsync line
constexpr std::uint64_t kFsyncRotateBytes = 128ULL << 20;  // ... in files of this size
constexpr double kFsyncTarget = 0.95;  // fsync at each rotation keeps at least this share of the throughput
constexpr double kRecorderTarget = 0.9;  // the recorder's rate over plain write()'s, at least
constexpr std::string_view kUnitSeconds = "s";

constexpr const char* kUsage =
    "usage: weir bench recorder [--json] [--reps N] [--quick] [--only live|drain|fsync|snapshot|codec|encoded]\n"
    "  the HDF5 recorder (SWMR) on 1 and 8 channels of 4 KiB f32 blocks, 1 GiB in all, against a\n"
    "  bare H5Dset_extent + H5Dwrite loop and plain write() of the same bytes, with its chunks by\n"
    "  H5Dwrite_chunk and by H5Dwrite; its drain rate; fsync at each rotation (128 MiB files) against\n"
    "  none; a 1 GiB arena's HDF5 snapshot time; the chunk codecs (deflate, LZ4, zstd, with and\n"
    "  without HDF5's byte shuffle) on detector-like i16 ADC codes: ratio and MB/s a core\n"
    "  --json     one JSON object per result line on stdout\n"
    "  --reps N   repetitions per case, 1..1000 (default 5); the median is reported\n"
    "  --quick    64 MiB instead of 1 GiB (for tests)\n"
    "  --only L   one line: live (1 and 8 channels), drain, fsync, snapshot, codec or encoded (the recorder\n"
    "             draining i16 detector codes through each codec)\n";

std::string scratch_dir() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
}

// Fills a 1 GiB (or --quick 64 MiB) channel ring and snapshots the arena to HDF5; seconds.
core::Result<double> snapshot_seconds(std::uint64_t bytes, const std::string& dir, int rep) {
  const std::string name = "bench.snapshot." + std::to_string(::getpid());
  const std::uint64_t blocks = bytes / kBlockBytes;
  core::ChannelSpec spec;
  spec.name = "big";
  spec.rate_hz = 1e6;
  spec.samples_per_block = kBlockBytes / sizeof(float);
  spec.ring_blocks = static_cast<std::uint32_t>(blocks);
  core::ArenaOptions options;
  options.vector_dim = 0;
  options.channel_data_bytes = core::channel_footprint(spec);
  options.replace_stale = true;
  auto arena = core::Arena::create(name, options);
  if (!arena) return tl::make_unexpected(arena.error());
  auto made = core::create_channel(*arena, spec);
  if (!made) return tl::make_unexpected(made.error());
  auto writer = core::ChannelWriter::open(*arena, "big");
  if (!writer) return tl::make_unexpected(writer.error());
  for (std::uint64_t b = 0; b < blocks; ++b) {
    std::span<std::byte> out;
    if (writer->claim(out) != core::ClaimStatus::ok) break;
    std::memset(out.data(), static_cast<int>(b & 0x7F), out.size());
    writer->publish(spec.samples_per_block);
  }
  const std::string path = dir + "/weir-bench-snapshot-" + std::to_string(::getpid()) + "-" + std::to_string(rep) + ".h5";
  auto stats = rec::snapshot_to_hdf5(*arena, path);
  std::remove(path.c_str());
  arena->close();
  (void)core::Arena::remove(name);
  if (!stats) return tl::make_unexpected(stats.error());
  return static_cast<double>(stats->elapsed_ns) / 1e9;
}

}  // namespace

int run_recorder_suite(const std::vector<std::string>& all_args) {
  // --only LINE: one line of the suite (live, drain, fsync, snapshot); the rest are the suites' options.
  std::vector<std::string> args;
  std::string only;
  for (std::size_t i = 0; i < all_args.size(); ++i) {
    if (all_args[i] == "--only" && i + 1 < all_args.size()) {
      only = all_args[++i];
      if (only != "live" && only != "drain" && only != "fsync" && only != "snapshot" && only != "codec" &&
          only != "encoded") {
        std::fprintf(stderr, "weir bench recorder: --only takes live, drain, fsync, snapshot, codec or encoded\n%s",
                     kUsage);
        return kExitUsage;
      }
      continue;
    }
    args.push_back(all_args[i]);
  }
  const auto wants = [&](std::string_view line) { return only.empty() || only == line; };
  int exit_code = kExitOk;
  const auto maybe_config = parse_suite_options(args, kUsage, exit_code);
  if (!maybe_config) return exit_code;
  const Config& config = *maybe_config;
  const std::uint64_t total = config.quick ? kQuickTotalBytes : kTotalBytes;
  const std::string dir = scratch_dir();
  Results results;
  Fields fields;
  // Each repetition takes every case of a line once, in turn, so a change of load reaches them alike.
  for (const std::uint32_t channels : {1U, 8U}) {
    if (!wants("live")) break;
    std::vector<double> bare, written, staged, recorded;
    const std::string suffix = std::to_string(channels) + "ch";
    for (int rep = 0; rep < config.reps; ++rep) {
      RecorderBenchOptions o;
      o.dir = dir;
      o.channels = channels;
      o.block_bytes = kBlockBytes;
      o.blocks = total / kBlockBytes / channels;
      auto base = bench_baseline(o);
      auto plain = bench_plain_write(o);
      o.staged = true;
      auto via_h5dwrite = bench_record(o);
      o.staged = false;
      auto r = bench_record(o);
      if (!base || !plain || !via_h5dwrite || !r) {
        results.note_error("record." + suffix, !base ? base.error().what
                                               : !plain ? plain.error().what
                                               : !via_h5dwrite ? via_h5dwrite.error().what
                                                               : r.error().what);
        break;
      }
      bare.push_back(base->mb_per_s);
      written.push_back(plain->mb_per_s);
      staged.push_back(via_h5dwrite->mb_per_s);
      recorded.push_back(r->mb_per_s);
    }
    if (bare.empty()) continue;
    results.add_row(make_row("base.hdf5_loop." + suffix, kUnitMBps, bare));
    results.add_row(make_row("base.write." + suffix, kUnitMBps, written));
    results.add_row(make_row("record.swmr.h5dwrite." + suffix, kUnitMBps, staged));
    results.add_row(make_row("record.swmr." + suffix, kUnitMBps, recorded));
  }
  if (wants("drain")) {
    std::vector<double> drain, drain_staged, written, written_cold, copied_written;
    for (int rep = 0; rep < config.reps; ++rep) {
      RecorderBenchOptions o;
      o.dir = dir;
      o.channels = 1;
      o.block_bytes = kBlockBytes;
      o.blocks = (config.quick ? kQuickTotalBytes : kDrainBytes) / kBlockBytes;
      o.prefill = true;
      auto plain = bench_plain_write(o);
      o.cold_source = true;
      auto cold = bench_plain_write(o);
      o.copy_first = true;
      auto copied = bench_plain_write(o);
      o.staged = true;
      auto via_h5dwrite = bench_record(o);
      o.staged = false;
      auto r = bench_record(o);
      if (!plain || !cold || !copied || !via_h5dwrite || !r) {
        results.note_error("record.drain.1ch", !plain ? plain.error().what
                                               : !cold ? cold.error().what
                                               : !copied ? copied.error().what
                                               : !via_h5dwrite ? via_h5dwrite.error().what
                                                               : r.error().what);
        break;
      }
      written.push_back(plain->mb_per_s);
      written_cold.push_back(cold->mb_per_s);
      copied_written.push_back(copied->mb_per_s);
      drain_staged.push_back(via_h5dwrite->mb_per_s);
      drain.push_back(r->mb_per_s);
    }
    if (!drain.empty()) {
      results.add_row(make_row("base.write.drain.1ch", kUnitMBps, written));
      results.add_row(make_row("base.write.cold.drain.1ch", kUnitMBps, written_cold));
      results.add_row(make_row("base.copy_write.cold.drain.1ch", kUnitMBps, copied_written));
      results.add_row(make_row("record.drain.h5dwrite.1ch", kUnitMBps, drain_staged));
      results.add_row(make_row("record.drain.1ch", kUnitMBps, drain));
      fields.add("record.drain.1ch", "msamples_per_s_f32", results.find("record.drain.1ch")->stats.median_ns / 4, 1);
    }
  }
  if (wants("fsync")) {
    // Durability's cost: the same live recording in files of kFsyncRotateBytes, each closed file
    // and its directory entry fsynced (the recorder's default), against no fsync; same run, in turn.
    std::vector<double> synced, unsynced, synced_durable, unsynced_durable;
    for (int rep = 0; rep < config.reps; ++rep) {
      RecorderBenchOptions o;
      o.dir = dir;
      o.channels = 1;
      o.block_bytes = kBlockBytes;
      o.blocks = (config.quick ? kQuickTotalBytes : kFsyncBytes) / kBlockBytes;
      o.rotate_bytes = kFsyncRotateBytes;
      o.fsync = rec::FsyncPolicy::never;
      auto never = bench_record(o);
      o.fsync = rec::FsyncPolicy::rotation;
      auto rotation = bench_record(o);
      if (!never || !rotation) {
        results.note_error("record.fsync.rotation.1ch", !never ? never.error().what : rotation.error().what);
        break;
      }
      unsynced.push_back(never->mb_per_s);
      synced.push_back(rotation->mb_per_s);
      unsynced_durable.push_back(never->durable_mb_per_s);
      synced_durable.push_back(rotation->durable_mb_per_s);
    }
    if (!synced.empty()) {
      results.add_row(make_row("record.fsync.never.1ch", kUnitMBps, unsynced));
      results.add_row(make_row("record.fsync.rotation.1ch", kUnitMBps, synced));
      // Until every file is on disk (each fsynced after the recording): the sustained figure, where
      // the kernel's write-back is paid for in both cases.
      results.add_row(make_row("record.durable.never.1ch", kUnitMBps, unsynced_durable));
      results.add_row(make_row("record.durable.rotation.1ch", kUnitMBps, synced_durable));
      fields.add("record.fsync.rotation.1ch", "rotate_mib", kFsyncRotateBytes >> 20);
    }
  }
  if (wants("snapshot")) {
    std::vector<double> seconds;
    for (int rep = 0; rep < config.reps; ++rep) {
      auto s = snapshot_seconds(total, dir, rep);
      if (!s) {
        results.note_error("snapshot.hdf5", s.error().what);
        break;
      }
      seconds.push_back(*s);
    }
    if (!seconds.empty()) {
      results.add_row(make_row("snapshot.hdf5", kUnitSeconds, seconds));
      fields.add("snapshot.hdf5", "arena_mib", total >> 20);
    }
  }
  if (wants("codec")) run_codec_line(config, results, fields);
  if (wants("encoded")) run_encoded_line(config, dir, results, fields);
  // A row has one baseline: plain write() of the same bytes, the floor; the bare HDF5 loop's ratio
  // is a field.
  for (const char* suffix : {"1ch", "8ch"}) {
    const Row* mine = results.find(std::string("record.swmr.") + suffix);
    const Row* loop = results.find(std::string("base.hdf5_loop.") + suffix);
    if (mine != nullptr && loop != nullptr && loop->stats.median_ns > 0)
      fields.add(mine->name, "vs_hdf5_loop", mine->stats.median_ns / loop->stats.median_ns, 3);
  }
  const AtLeast comparisons[] = {{"record.swmr.1ch", "base.write.1ch", kRecorderTarget},
                                 {"record.swmr.8ch", "base.write.8ch", kRecorderTarget},
                                 {"record.swmr.h5dwrite.1ch", "base.write.1ch", 0},
                                 {"record.swmr.h5dwrite.8ch", "base.write.8ch", 0},
                                 {"record.drain.1ch", "base.write.drain.1ch", kRecorderTarget},
                                 {"record.drain.h5dwrite.1ch", "base.write.drain.1ch", 0},
                                 {"base.write.cold.drain.1ch", "base.write.drain.1ch", 0},
                                 {"base.copy_write.cold.drain.1ch", "base.write.drain.1ch", 0},
                                 {"record.fsync.rotation.1ch", "record.fsync.never.1ch", 0},
                                 {"record.durable.rotation.1ch", "record.durable.never.1ch", kFsyncTarget}};
  compare_at_least(results, comparisons);
  char title[256];
  std::snprintf(title, sizeof title,
                "weir bench recorder: MB/s of sample data (higher is better), %s a case, median/min/max of %d "
                "repetitions%s",
                config.quick ? "64 MiB" : "1 GiB", config.reps, config.quick ? " (--quick)" : "");
  print_report(results.rows(), fields, config.json, title);
  return results.failures() != 0 ? kExitFailed : kExitOk;
}

}  // namespace weir::bench

// `weir snapshot NAME FILE.h5` and `weir snapshot NAME DIR/ [--every S]`: consistent HDF5 copies of
// a live arena (recorders/snapshot), once or on a period until SIGINT or SIGTERM.
#include <fmt/format.h>
#include <signal.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <string>

#include "command.hpp"
#include "snapshot_h5.hpp"
#include "time_units.hpp"
#include "weir/snapshot/periodic.hpp"
#include "weir/snapshot/snapshot.hpp"
#include "weir/tools/arena_access.hpp"
#include "weir/tools/output.hpp"
#include "weir/tools/stop_signals.hpp"

namespace weir::tools {
namespace {

constexpr double kMinEveryS = 0.001;  // --every below a millisecond is a typo, not a period

bool ends_with(const std::string& text, std::string_view end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

double ms(std::uint64_t ns) { return static_cast<double>(ns) / kNsPerMs; }

JsonObject stats_json(const rec::SnapshotStats& s) {
  JsonObject out;
  out.number("keys", s.keys)
      .number("keys_busy", s.keys_busy)
      .number("keys_torn", s.keys_torn)
      .number("copies_retried", s.copies_retried)
      .number("writers_met", s.writers_met)
      .number("channels", s.channels)
      .number("blocks", s.blocks)
      .number("samples", s.samples)
      .number("blocks_overwritten", s.blocks_overwritten)
      .number("vectors", s.vectors)
      .number("vectors_busy", s.vectors_busy)
      .number("vectors_torn", s.vectors_torn)
      .number("groups", s.groups)
      .number("consumers", s.consumers)
      .number("bytes_copied", s.bytes_copied)
      .number("file_bytes", s.file_bytes)
      .number("elapsed_ns", s.elapsed_ns)
      .number("sync_ns", s.sync_ns);
  return out;
}

std::string stats_text(const rec::SnapshotStats& s) {
  std::string text = fmt::format("{} keys, {} channel{} ({} blocks), {} vectors, {} consumers; {} in {:.1f} ms", s.keys,
                                 s.channels, s.channels == 1 ? "" : "s", s.blocks, s.vectors, s.consumers,
                                 human_bytes(s.file_bytes), ms(s.elapsed_ns));
  if (s.keys_busy + s.vectors_busy > 0)
    text += fmt::format("\n  {} key(s) and {} vector(s) busy: a writer held them throughout (recorded as busy)",
                        s.keys_busy, s.vectors_busy);
  if (s.keys_torn + s.vectors_torn > 0)
    text += fmt::format("\n  {} key(s) and {} vector(s) torn by a dead writer (recorded as torn, no value)",
                        s.keys_torn, s.vectors_torn);
  if (s.blocks_overwritten > 0)
    text += fmt::format("\n  {} block(s) overwritten by their writer before they could be copied (listed as skipped)",
                        s.blocks_overwritten);
  return text;
}

rec::SnapshotOptions options_of(const H5SnapshotArgs& args) {
  rec::SnapshotOptions o;
  o.blocks = args.blocks;
  o.overwrite = args.force;
  return o;
}

int run_once(const core::Arena& arena, const std::string& path, const H5SnapshotArgs& args, bool json) {
  auto stats = rec::snapshot_to_hdf5(arena, path, options_of(args));
  if (!stats) return report_error("", stats.error());  // the library names the arena and the file
  if (json) {
    JsonObject out = stats_json(*stats);
    out.text("arena", arena.location().describe()).text("file", path);
    print_json(out);
  } else {
    fmt::print("snapshot of {} written to '{}': {}\n", arena.location().describe(), path, stats_text(*stats));
  }
  return kExitOk;
}

int run_periodic(const core::Arena& arena, const std::string& dir, const H5SnapshotArgs& args, bool json) {
  rec::PeriodicOptions o;
  o.dir = dir;
  o.every_ns = std::llround(args.every_s * kNsPerSecond);
  o.max_files = args.count;
  o.snapshot = options_of(args);
  const StopSignals signals;
  const auto on_file = [json](const rec::PeriodicShot& shot) {
    if (json) return;
    fmt::print("snapshot {} written to '{}': {}\n", shot.number, shot.path, stats_text(shot.stats));
    std::fflush(stdout);  // one line per file as it happens, also into a pipe
  };
  const auto on_error = [](const core::Error& e) { print_error(e.what); };
  auto report = rec::run_periodic_snapshots(arena, o, StopSignals::flag(), on_file, on_error);
  if (!report) return report_error("", report.error());
  if (json) {
    JsonObject out;
    out.text("arena", arena.location().describe())
        .text("dir", dir)
        .real("every_s", args.every_s)
        .number("files", report->files)
        .number("failures", report->failures)
        .number("missed", report->missed)
        .text("first", report->first_path)
        .text("last", report->last_path)
        .boolean("stopped", report->stopped);
    print_json(out);
  } else {
    fmt::print("{} snapshot{} of {} every {} s into '{}'{}; {} failed, {} period{} missed\n", report->files,
               report->files == 1 ? "" : "s", arena.location().describe(), format_real(args.every_s), dir,
               report->stopped ? ", stopped by a signal" : "", report->failures, report->missed,
               report->missed == 1 ? "" : "s");
  }
  return report->failures == 0 ? kExitOk : kExitError;
}

}  // namespace

void add_h5_snapshot_options(CLI::App& sub, H5SnapshotArgs& args) {
  sub.add_option("--blocks", args.blocks, "FILE.h5: the last N blocks of each channel (default: the whole ring)")
      ->check(CLI::PositiveNumber);
  sub.add_flag("--force", args.force, "FILE.h5: replace an existing file");
  CLI::Option* every = sub.add_option("--every", args.every_s,
                                      "DIR/: a numbered snapshot every S seconds until Ctrl-C (never overwritten)")
                           ->check(CLI::Range(kMinEveryS, 1e9));
  sub.add_option("--count", args.count, "with --every: stop after N snapshots")
      ->check(CLI::PositiveNumber)
      ->needs(every);
}

bool wants_h5_snapshot(const std::string& file, const H5SnapshotArgs& args) {
  return ends_with(file, ".h5") || ends_with(file, "/") || args.every_s > 0 || args.blocks > 0 || args.force;
}

int run_h5_snapshot(const std::string& where, const std::string& file, const H5SnapshotArgs& args, bool json) {
  const bool dir = ends_with(file, "/");
  if (args.every_s > 0 && !dir) return report_usage("--every writes numbered files into a directory: give DIR/");
  if (!dir && !ends_with(file, ".h5"))
    return report_usage("--blocks and --force apply to HDF5 snapshots: give FILE.h5 or DIR/");
  if (dir && args.force) return report_usage("--force does not apply to DIR/: numbered files are never overwritten");
  auto arena = open_arena(where, Access::read_only);
  if (!arena) return kExitError;
  if (args.every_s > 0) return run_periodic(*arena, file, args, json);
  if (!dir) return run_once(*arena, file, args, json);
  auto number = rec::next_snapshot_number(file, arena->location().name);  // one numbered file into DIR/
  if (!number) return report_error("", number.error());
  return run_once(*arena, rec::numbered_snapshot_path(file, arena->location().name, *number), args, json);
}

}  // namespace weir::tools

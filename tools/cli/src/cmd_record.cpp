// `weir record`: the headless HDF5 recorder. Follows channels (a registered consumer each) and
// keys of an arena, writes SWMR segments (docs/design/recording.md), rotates on size, time, SIGHUP
// or a new matching channel, and stops cleanly on SIGINT, SIGTERM or --duration.
#include <signal.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cmd_record_kafka.hpp"
#include "command.hpp"
#include "weir/core/channel.hpp"
#include "weir/recorder/naming.hpp"
#include "weir/recorder/pipeline_nexus.hpp"
#include "weir/recorder/recorder.hpp"
#include "weir/supervisor/pipeline_drivers.hpp"
#include "weir/supervisor/pipeline_shards.hpp"
#include "weir/tools/exit_codes.hpp"
#include "weir/tools/arena_access.hpp"
#include "weir/tools/output.hpp"

namespace weir::tools {
namespace {

constexpr double kBytesPerMb = 1024.0 * 1024.0;
constexpr std::uint32_t kMaxFlushMs = 3'600'000;  // an hour
constexpr std::uint32_t kMaxThrottleUs = 1'000'000;

struct RecordArgs {
  std::string where;
  std::vector<std::string> channels;
  std::vector<std::string> keys;
  std::string out;
  std::string policy = "lossless";
  std::uint32_t flush_ms = rec::kDefaultFlushMs;
  double rotate_mb = 0;
  double rotate_s = 0;
  int compress = 0;
  std::string codec;
  unsigned encode_threads = 0;
  std::uint64_t run = 0;
  std::string pipeline;
  double duration_s = 0;
  bool wait_for_channels = false;
  std::uint32_t key_wait_ms = 1000;
  bool from_oldest = false;
  std::uint32_t throttle_us = 0;
  double min_free_mb = -1;
  std::string fsync = "rotation";
  double fsync_interval_s = 10;
  bool require_mount = false;
  std::string missing_before = "before_start";
  bool controlled = false;  // record only inside the arena's runs (weir runctl)
  bool no_checksums = false;
  std::vector<std::string> on_close;  // the hand-off command's argv, one --on-close=ARG each
  double on_close_timeout_s = rec::kHandoffTimeoutS;
  double on_close_retry_s = rec::kHandoffRetryS;
  double on_close_retry_max_s = rec::kHandoffRetryMaxS;
  double keep_free_gib = 0, keep_max_gib = 0, keep_max_age_days = 0;  // retention (0: no limit)
  std::string keep_after;                                           // "": by whether --on-close is given
  std::string part;
  bool json = false;
  KafkaRecordArgs kafka;  // --from-kafka: the file-writer
};

// The recording's control block: signal handlers only store into its atomics.
rec::RecordControl* active_control = nullptr;

void on_stop(int) {
  if (active_control != nullptr) active_control->stop.store(true, std::memory_order_relaxed);
}
void on_rotate(int) {
  if (active_control != nullptr) active_control->rotate.store(true, std::memory_order_relaxed);
}

// SIGINT and SIGTERM stop cleanly, SIGHUP rotates, for the recording's lifetime. SIGPIPE is ignored:
// a log no one reads any more (its reader killed) must not kill the recorder with a file open.
class RecordSignals {
 public:
  explicit RecordSignals(rec::RecordControl& control) noexcept {
    active_control = &control;
    struct sigaction stop {};
    stop.sa_handler = &on_stop;
    sigemptyset(&stop.sa_mask);
    struct sigaction rotate {};
    rotate.sa_handler = &on_rotate;
    sigemptyset(&rotate.sa_mask);
    sigaction(SIGINT, &stop, &old_int_);
    sigaction(SIGTERM, &stop, &old_term_);
    sigaction(SIGHUP, &rotate, &old_hup_);
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &old_pipe_);
  }
  RecordSignals(const RecordSignals&) = delete;
  RecordSignals& operator=(const RecordSignals&) = delete;
  ~RecordSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
    sigaction(SIGHUP, &old_hup_, nullptr);
    sigaction(SIGPIPE, &old_pipe_, nullptr);
    active_control = nullptr;
  }

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
  struct sigaction old_hup_ {};
  struct sigaction old_pipe_ {};
};

core::Result<rec::RecordOptions> to_options(const RecordArgs& a) {
  rec::RecordOptions o;
  o.channels = a.channels;
  o.keys = a.keys;
  o.out = a.out;
  auto policy = core::parse_policy(a.policy);
  if (!policy) return tl::make_unexpected(policy.error());
  o.policy = *policy;
  o.flush_ms = a.flush_ms;
  o.rotate_bytes = static_cast<std::uint64_t>(std::llround(a.rotate_mb * kBytesPerMb));
  o.rotate_s = a.rotate_s;
  if (a.compress > 0 && !a.codec.empty())
    return core::fail(core::Errc::invalid_argument, "--compress and --codec: name the codec once (--compress " +
                                                        std::to_string(a.compress) + " is --codec shuffle+deflate:" +
                                                        std::to_string(a.compress) + ")");
  if (a.compress > 0) o.codec.codec = codec::Codec{codec::Method::deflate, true, a.compress};
  if (!a.codec.empty())
    if (auto ok = rec::parse_codecs(a.codec, o); !ok) return tl::make_unexpected(ok.error());
  o.encode_threads = a.encode_threads;
  o.run = a.run;
  o.duration_s = a.duration_s;
  o.wait_for_channels = a.wait_for_channels;
  o.key_wait_ms = a.key_wait_ms;
  o.from_oldest = a.from_oldest;
  o.throttle_us = a.throttle_us;
  auto fsync = rec::parse_fsync(a.fsync);
  if (!fsync) return tl::make_unexpected(fsync.error());
  o.fsync = *fsync;
  o.fsync_interval_s = a.fsync_interval_s;
  o.require_mount = a.require_mount;
  o.checksums = !a.no_checksums;
  o.on_close.command = a.on_close;
  o.on_close.timeout_s = a.on_close_timeout_s;
  o.on_close.retry_s = a.on_close_retry_s;
  o.on_close.retry_max_s = std::max(a.on_close_retry_max_s, a.on_close_retry_s);
  o.part = a.part;
  o.keep.free_gib = a.keep_free_gib;
  o.keep.max_gib = a.keep_max_gib;
  o.keep.max_age_days = a.keep_max_age_days;
  if (!a.keep_after.empty()) {
    auto after = rec::parse_keep_after(a.keep_after);
    if (!after) return core::fail(core::Errc::invalid_argument, "--keep-after " + a.keep_after + ": 'closed' or 'handed_over'");
    o.keep.after = *after;
  }
  auto missing = rec::parse_missing_before(a.missing_before);
  if (!missing) return tl::make_unexpected(missing.error());
  o.missing_before = *missing;
  o.min_free_bytes = a.min_free_mb < 0 ? -1 : static_cast<std::int64_t>(std::llround(a.min_free_mb * kBytesPerMb));
  if (!a.pipeline.empty()) {
    std::ifstream in(a.pipeline, std::ios::binary);
    if (!in) return core::fail(core::Errc::not_found, fmt::format("--pipeline {}: cannot read it", a.pipeline));
    o.pipeline_text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    o.pipeline_file = a.pipeline;
    // The entry's title, definition, source, parts and calibrations; a file that is not a pipeline
    // is still stored as it is, its recordings with the recorder's own entry fields.
    if (auto nexus = rec::nexus_from_pipeline(o.pipeline_text, a.pipeline, supervisor::pipeline_shard_resolver(),
                                                  supervisor::pipeline_driver_channels()))
      o.nexus = std::move(*nexus);
    else
      fmt::print(stderr, "record: --pipeline {}: no NeXus metadata from it ({})\n", a.pipeline, nexus.error().what);
  }
  return o;
}

void print_text(const RecordArgs& a, const rec::RecordSummary& s) {
  fmt::print("record {} run {}: {} channel{}, {} file{}, stopped by {}\n", a.where, s.run, s.channels.size(),
             s.channels.size() == 1 ? "" : "s", s.files.size(), s.files.size() == 1 ? "" : "s", s.stopped_by);
  fmt::print("  {} blocks, {} samples, {} gap{} ({} blocks missing), {} on disk\n", s.blocks, s.samples, s.gaps,
             s.gaps == 1 ? "" : "s", s.gap_blocks, human_bytes(s.bytes));
  for (const rec::ChannelSummary& c : s.channels)
    fmt::print("  {:<16} {:>10} blocks {:>12} samples {:>6} gaps {:>8} missing {:>10}\n", c.name, c.blocks, c.samples,
               c.gaps, c.gap_blocks, human_bytes(c.bytes));
  for (const std::string& f : s.files) fmt::print("  {}\n", f);
  if (s.unreachable_blocks > 0)
    fmt::print("  {} blocks written to files that are gone or whose close failed (not counted above)\n",
               s.unreachable_blocks);
}

void print_json_summary(const RecordArgs& a, const rec::RecordSummary& s) {
  JsonArray files;
  for (const std::string& f : s.files) files.text(f);
  JsonArray channels;
  for (const rec::ChannelSummary& c : s.channels) {
    JsonObject one;
    one.text("name", c.name)
        .number("blocks", c.blocks)
        .number("samples", c.samples)
        .number("bytes", c.bytes)
        .number("gaps", c.gaps)
        .number("gap_blocks", c.gap_blocks);
    channels.raw(one.str());
  }
  JsonObject out;
  out.text("arena", a.where)
      .number("run", s.run)
      .text("stopped_by", s.stopped_by)
      .number("blocks", s.blocks)
      .number("samples", s.samples)
      .number("gaps", s.gaps)
      .number("gap_blocks", s.gap_blocks)
      .number("bytes", s.bytes)
      .number("unreachable_blocks", s.unreachable_blocks)
      .raw("files", files.str())
      .raw("channels", channels.str());
  if (!s.error.empty()) {
    out.text("error", s.error).number("errno", static_cast<std::int64_t>(s.error_number));
    out.text("fault", s.disk_full ? "disk_full" : s.disk_fault ? "disk_fault" : "error");
  }
  print_json(out);
}

// The exit status of a summary's error: a full disk 3, a disk fault 4, anything else 1.
int fault_status(const rec::RecordSummary& s) {
  if (s.disk_full) return kExitDiskFull;
  return s.disk_fault ? kExitDiskFault : kExitError;
}

// --controlled: one recording per run of the arena's run control, until SIGINT or SIGTERM.
int run_controlled(const RecordArgs& args, const core::Arena& arena, const rec::RecordOptions& options,
                   rec::RecordControl& control) {
  if (args.run != 0) return report_usage("record: --run and --controlled: the arena's run control numbers the runs");
  if (args.duration_s > 0) return report_usage("record: --duration and --controlled: a run ends at its stop");
  auto runs = rec::record_runs(arena, options, control);
  if (!runs) return report_error("record", runs.error());
  print_unless_closed([&] {
    fmt::print("record {}: {} run{} recorded\n", args.where, runs->runs, runs->runs == 1 ? "" : "s");
    std::fflush(stdout);
  });
  if (runs->error) {
    print_error(fmt::format("record: run {}: {}", runs->last.run, runs->last.error));
    return fault_status(runs->last);
  }
  return kExitOk;
}

int run_record(const RecordArgs& args) {
  auto options = to_options(args);
  if (!options) return report_usage(options.error().what);
  if (!args.kafka.brokers.empty()) return run_record_kafka(args.kafka, args.where, *options, args.json);
  if (args.where.empty() || args.channels.empty())
    return report_usage("record: give the arena NAME and --channels (or --from-kafka BROKERS)");
  if (options->require_mount) {  // before check_options creates --out on the root disk
    auto root = rec::on_root_filesystem(rec::parse_out(options->out).dir);
    if (!root) return report_error("record", root.error());
    if (*root) {
      print_error(fmt::format("record: --require-mount: --out {} is on the root filesystem, not on a mounted disk",
                              rec::parse_out(options->out).dir.string()));
      return kExitDiskFault;
    }
  }
  rec::StartFault fault;
  if (auto ok = rec::check_options(*options, &fault); !ok) {
    const int status = report_error("record", ok.error());
    if (fault.disk_full) return kExitDiskFull;  // a disk that fails at start: the statuses of one that fails later
    return fault.disk_fault ? kExitDiskFault : status;
  }
  auto arena = open_arena(args.where, Access::read_write);  // consumer rows need a writable mapping
  if (!arena) return kExitError;
  rec::RecordControl control;
  control.notice = [](std::string_view line) { print_error(fmt::format("record: {}", line)); };
  const RecordSignals signals(control);  // a closed stdout or stderr (EPIPE) is only a log no one reads
  if (args.controlled) return run_controlled(args, *arena, *options, control);
  auto summary = rec::record(*arena, *options, control);
  if (!summary) return report_error("record", summary.error());
  print_unless_closed([&] {
    if (args.json)
      print_json_summary(args, *summary);
    else
      print_text(args, *summary);
    std::fflush(stdout);
  });
  if (!summary->error.empty()) {
    print_error(fmt::format("record: {}", summary->error));
    return fault_status(*summary);
  }
  return kExitOk;
}

}  // namespace

void add_record_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<RecordArgs>();
  CLI::App* sub = app.add_subcommand(
      "record", "Record channels and keys to HDF5 (SWMR, NeXus) as a registered consumer; rotates on size, time, "
                "SIGHUP or a new channel; SIGINT/SIGTERM stop cleanly");
  add_name_option(*sub, args->where)->required(false);  // with --from-kafka: the writer's name
  sub->add_option("--channels", args->channels, "channel name patterns (glob: 'adc*'); every match is recorded")
      ->expected(1, -1);
  sub->add_option("--out", args->out, "directory (files NAME_runRUN_SEG.h5) or FILE.h5 (then FILE_SEG.h5)")->required();
  sub->add_option("--policy", args->policy, "lossless (the writer waits or drops at source) or lossy")
      ->capture_default_str()
      ->check(CLI::IsMember({"lossless", "lossy"}));
  sub->add_option("--keys", args->keys, "key name patterns, sampled on change")->expected(1, -1);
  sub->add_option("--flush-ms", args->flush_ms, "flush period in ms: a crash keeps everything up to the last flush")
      ->capture_default_str()
      ->check(CLI::Range(1U, kMaxFlushMs));
  sub->add_option("--rotate-mb", args->rotate_mb, "start the next file at this size in MiB")
      ->check(CLI::PositiveNumber);
  sub->add_option("--rotate-s", args->rotate_s, "start the next file after this many seconds")
      ->check(CLI::PositiveNumber);
  sub->add_option("--compress", args->compress, "shuffle + deflate level 1-9 on channel data (--codec shuffle+deflate:N)")
      ->check(CLI::Range(0, 9));
  sub->add_option("--codec", args->codec,
                  "channel data's codec: NAME, or comma-separated NAME and PATTERN=NAME items (the first matching "
                  "pattern wins); NAME: auto (shuffle+lz4 on integer channels, none on floats), none, lz4, shuffle+lz4, "
                  "bitshuffle+lz4, deflate[:1-9], shuffle+deflate[:1-9], "
                  "zstd[:1-22], shuffle+zstd[:1-22]");
  sub->add_option("--encode-threads", args->encode_threads, "threads encoding chunks (default: one per CPU, at most 8)")
      ->check(CLI::Range(1U, 64U));
  sub->add_option("--run", args->run, "run number (default: one more than the highest in --out); an existing run "
                                      "continues in its next file")
      ->check(CLI::PositiveNumber);
  sub->add_option("--pipeline", args->pipeline, "pipeline file whose text is stored in every file");
  sub->add_option("--duration", args->duration_s, "stop cleanly after this many seconds")->check(CLI::PositiveNumber);
  sub->add_option("--key-wait-ms", args->key_wait_ms,
                  "the first file waits up to this long for recorded keys that are still empty to take their first "
                  "value (their log's kind is fixed per file); never past half a channel's ring; 0: no wait")
      ->capture_default_str();
  sub->add_flag("--wait-for-channels", args->wait_for_channels,
                "a pattern matching no channel yet waits for one instead of failing");
  sub->add_flag("--from-oldest", args->from_oldest,
                "also record the blocks still in each channel's ring when recording starts");
  sub->add_option("--min-free-mb", args->min_free_mb,
                  "stop cleanly when free disk falls below this (default: what closing the files needs)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--fsync", args->fsync,
                  "durability: rotation (each closed file and its directory entry), interval (and the open file "
                  "every --fsync-interval-s) or never")
      ->capture_default_str()
      ->check(CLI::IsMember({"rotation", "interval", "never"}));
  sub->add_option("--fsync-interval-s", args->fsync_interval_s, "--fsync interval: seconds between fsyncs of the open file")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->add_flag("--require-mount", args->require_mount,
                "refuse to record onto the root filesystem (--out must be on a mounted disk)");
  sub->add_option("--missing-before", args->missing_before,
                  "the reason for blocks from a channel's start in the run to the first one still readable that no "
                  "file of the run holds: before_start, or from a supervisor's restart disk_error or recorder_down")
      ->capture_default_str();
  sub->add_option("--throttle-us", args->throttle_us, "testing: sleep this long after every block")
      ->check(CLI::Range(0U, kMaxThrottleUs))
      ->group("");  // hidden: it only makes a slow recorder for tests
  sub->add_flag("--no-checksums", args->no_checksums,
                "write no FILE.sha256 manifest beside each closed file (they are hashed off the recording thread)");
  sub->add_option("--on-close", args->on_close,
                  "the hand-off command, one argument per --on-close=ARG ({path}, {name}, {dir}, {sha256} replaced): "
                  "run for each closed file in a process of its own, retried with back-off until it exits 0, then "
                  "recorded once as FILE.handed")
      ->allow_extra_args(false)
      ->take_all();
  sub->add_option("--on-close-timeout-s", args->on_close_timeout_s, "a hand-off running longer is killed (a failed try)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->add_option("--on-close-retry-s", args->on_close_retry_s, "the first retry of a failed hand-off after this long; doubled each time")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->add_option("--on-close-retry-max-s", args->on_close_retry_max_s, "the longest wait between hand-off tries")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->add_option("--keep-free-gib", args->keep_free_gib,
                  "retention: delete the oldest closed files of finished runs while the disk has less free than this "
                  "(GiB, fractions allowed; 0: no limit); when nothing may go, recording stops at --min-free-mb as before")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--keep-max-gib", args->keep_max_gib,
                  "retention: delete the oldest closed files of finished runs while this recorder's files in --out total more (GiB)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--keep-max-age-days", args->keep_max_age_days,
                  "retention: delete closed files of finished runs closed longer ago than this (days)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--keep-after", args->keep_after,
                  "retention takes a file once it is closed, or only once handed_over by --on-close (the default with --on-close)")
      ->check(CLI::IsMember({"closed", "handed_over"}));
  sub->add_option("--part", args->part, "the pipeline part this recorder is: its counters go to keys PART.files_hashed, "
                                        "PART.handoff_ok, PART.handoff_failures, ...");
  sub->add_flag("--controlled", args->controlled,
                "record only inside the arena's runs, each run into its own files, waiting between runs "
                "(weir runctl start|stop ARENA)");
  add_json_flag(*sub, args->json);
  add_record_kafka_options(*sub, args->kafka);
  bind_action(*sub, action, args, &run_record);
}

}  // namespace weir::tools

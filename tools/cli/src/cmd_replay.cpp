// `weir replay FILE.h5... NAME`: plays a recording (one file, or a rotated run's files in order) back
// into an arena's channels, on the recorded timing or as fast as consumers allow, and reports what
// was replayed when it ends (end of the recording, SIGINT, SIGTERM).
#include <fmt/format.h>
#include <signal.h>

#include <atomic>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "channel_writer.hpp"
#include "command.hpp"
#include "weir/replay/replay.hpp"
#include "weir/tools/arena_access.hpp"
#include "weir/tools/output.hpp"
#include "weir/tools/stop_signals.hpp"

namespace weir::tools {
namespace {

struct ReplayArgs {
  std::vector<std::string> positional;  // FILE.h5... NAME
  std::string speed = "1.0";
  std::vector<std::string> channels;
  std::vector<std::string> keys;
  bool loop = false;
  std::uint64_t loops = 0;
  std::uint32_t wait_consumers = 0;
  std::string wait_kind = "record:hdf5";
  double wait_consumers_s = 30;
  ChannelWriterArgs writer;
  bool json = false;
};

// "max" -> 0; a positive number -> itself; anything else -> an error message.
core::Result<double> parse_speed(const std::string& text) {
  if (text == "max") return 0.0;
  std::size_t used = 0;
  double speed = 0;
  try {
    speed = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !std::isfinite(speed) || speed <= 0)
    return core::fail(core::Errc::invalid_argument, fmt::format("--speed must be a positive number or max, not '{}'", text));
  return speed;
}

void print_text(const std::string& where, const acq::ReplayReport& r) {
  const std::string speed = r.speed == 0 ? "max speed" : format_real(r.speed) + "x";
  fmt::print("replayed {} file{} into {} at {}: {} pass{}{}, {:.3f} s for {:.3f} s recorded\n", r.files.size(),
             r.files.size() == 1 ? "" : "s", where, speed, r.loops, r.loops == 1 ? "" : "es",
             r.stopped ? ", stopped by a signal" : "", r.elapsed_s, r.recorded_s);
  fmt::print(
      "  {} blocks ({} samples) published, {} dropped at the source, {} recorded block{} missing replayed "
      "as lost blocks",
      r.blocks_published, r.samples_published, r.blocks_dropped, r.blocks_missing, r.blocks_missing == 1 ? "" : "s");
  if (r.speed != 0) fmt::print("; max lateness {:.3f} ms", static_cast<double>(r.max_lateness_ns) / kNsPerMs);
  fmt::print("\n");
  if (!r.keys.empty()) {
    fmt::print("  {} logged key value{} written to {} key{}", r.keys_written, r.keys_written == 1 ? "" : "s",
               r.keys.size(), r.keys.size() == 1 ? "" : "s");
    if (r.keys_failed != 0) fmt::print(", {} refused (first: {})", r.keys_failed, r.key_failure);
    fmt::print("\n");
  }
  for (const acq::ReplayChannelReport& c : r.channels)
    fmt::print("  {:<16} {:<8} {:>10} blocks {:>12} samples {:>6} gaps {:>8} missing {:>8} dropped\n", c.name,
               c.created ? "created" : "attached", c.blocks_published, c.samples_published, c.gaps, c.blocks_missing,
               c.blocks_dropped);
}

void print_json_report(const std::string& where, const acq::ReplayReport& r) {
  JsonArray files;
  for (const std::string& f : r.files) files.text(f);
  JsonArray channels;
  for (const acq::ReplayChannelReport& c : r.channels) {
    JsonObject one = fed_channel_json(c);
    one.number("gaps", c.gaps)
        .number("blocks_missing", c.blocks_missing)
        .number("gap_row_blocks", c.gap_row_blocks)
        .number("recorded_drops", c.recorded_drops);
    channels.raw(one.str());
  }
  JsonArray keys;
  for (const std::string& k : r.keys) keys.text(k);
  JsonObject out;
  out.text("arena", where)
      .raw("files", files.str())
      .real("speed", r.speed)
      .number("loops", r.loops)
      .boolean("stopped", r.stopped)
      .number("blocks_published", r.blocks_published)
      .number("samples_published", r.samples_published)
      .number("blocks_dropped", r.blocks_dropped)
      .number("blocks_missing", r.blocks_missing)
      .real("recorded_s", r.recorded_s)
      .real("elapsed_s", r.elapsed_s)
      .number("max_lateness_ns", r.max_lateness_ns)
      .raw("keys", keys.str())
      .number("keys_written", r.keys_written)
      .number("keys_failed", r.keys_failed)
      .raw("channels", channels.str());
  print_json(out);
}

int run_replay_command(const ReplayArgs& args) {
  if (args.positional.size() < 2) return report_usage("give one or more recording files, then the arena NAME");
  const std::vector<std::string> files(args.positional.begin(), args.positional.end() - 1);
  const std::string& where = args.positional.back();
  auto speed = parse_speed(args.speed);
  if (!speed) return report_usage(speed.error().what);
  acq::ReplayOptions o;
  o.speed = *speed;
  o.channels = args.channels;
  o.keys = args.keys;
  o.loop = args.loop || args.loops > 0;
  o.max_loops = args.loops;
  o.wait_consumers = args.wait_consumers;
  o.wait_kind = args.wait_kind == "any" ? std::string() : args.wait_kind;
  o.wait_consumers_ns = static_cast<std::int64_t>(args.wait_consumers_s * 1e9);
  args.writer.apply_to(o);

  auto recording = acq::open_recording(files);  // refuses a bad file before the arena is touched
  if (!recording) return report_error("", recording.error());
  auto arena = open_arena(where, Access::read_write);
  if (!arena) return kExitError;
  const StopSignals signals;
  auto report = acq::run_replay(*arena, *recording, o, StopSignals::flag());
  if (!report) return report_error("", report.error());
  if (args.json)
    print_json_report(arena->location().describe(), *report);
  else
    print_text(arena->location().describe(), *report);
  return kExitOk;
}

}  // namespace

void add_replay_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<ReplayArgs>();
  CLI::App* sub =
      app.add_subcommand("replay",
                         "Play a recording back into an arena's channels with its timing, samples, stamps and gaps; "
                         "several files replay a rotated run in order; Ctrl-C stops and reports");
  sub->add_option("FILE.h5... NAME", args->positional,
                  "recording files in order, then the arena (shm name, file path containing '/', or memfd:NAME)")
      ->required()
      ->expected(2, 1 << 20);
  sub->add_option("--speed", args->speed,
                  "recorded time per replay time (2 = twice as fast), or max: as fast as "
                  "lossless consumers allow")
      ->capture_default_str();
  sub->add_option("--channels", args->channels, "replay only channels matching these shell patterns");
  sub->add_option("--keys", args->keys,
                  "also replay the logged keys matching these shell patterns, each value written at its "
                  "recorded time as its type (numbers as f64, text, arrays with their dtype and shape); "
                  "default: no keys");
  sub->add_flag("--loop", args->loop, "start over at the end until Ctrl-C");
  sub->add_option("--loops", args->loops, "replay this many passes (implies --loop)")->check(CLI::PositiveNumber);
  sub->add_option("--wait-consumers", args->wait_consumers,
                  "before the first block, wait until each replayed channel has this many lossless consumers of "
                  "--wait-kind (a recorder started first: --speed max then records every block)");
  sub->add_option("--wait-kind", args->wait_kind, "the consumers --wait-consumers waits for: a kind, or any")
      ->capture_default_str();
  sub->add_option("--wait-consumers-s", args->wait_consumers_s, "how long --wait-consumers waits before failing")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  add_channel_writer_options(*sub, args->writer, "replay");
  add_json_flag(*sub, args->json);
  bind_action(*sub, action, args, &run_replay_command);
}

}  // namespace weir::tools

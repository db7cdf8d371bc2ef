// `weir lua-driver`: the lua acquisition driver. A user's Lua function, called on a period or once
// per block, returns samples for channels and values for keys. Run by `weir run` for a pipeline's
// `driver "lua" { ... }` (--pipeline FILE --part NAME), or on its own with --script and friends.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "channel_writer.hpp"
#include "command.hpp"
#include "weir/acq_lua/lua_driver.hpp"
#include "weir/acq_lua/lua_driver_config.hpp"
#include "weir/config/pipeline.hpp"
#include "weir/core/channel.hpp"
#include "weir/tools/arena_access.hpp"
#include "weir/tools/output.hpp"
#include "weir/tools/stop_signals.hpp"

namespace weir::tools {
namespace {

struct LuaDriverArgs {
  std::string where;
  std::string pipeline;
  std::string part;
  std::string script;
  std::string function = acq::kLuaDefaultFunction;
  double period_s = 0;
  bool per_block = false;
  std::vector<std::string> channels;
  double rate_hz = 0;
  std::uint32_t block = 1;
  std::string dtype = "f64";
  std::string units;
  std::uint32_t memory_mb = lua_sandbox::kDefaultMemoryMb;
  int instructions = lua_sandbox::kDefaultInstructions;
  double seconds = 0;
  std::uint64_t calls = 0;
  ChannelWriterArgs writer;
  bool json = false;
};

// The options of a pipeline's driver, or of the command line; fails with a message for people.
core::Result<acq::LuaDriverOptions> to_options(const LuaDriverArgs& args) {
  acq::LuaDriverOptions o;
  if (!args.pipeline.empty()) {
    auto pipeline = config::load_pipeline(args.pipeline);
    if (!pipeline) return tl::make_unexpected(pipeline.error());
    const auto found = std::find_if(pipeline->drivers.begin(), pipeline->drivers.end(),
                                    [&](const config::DriverDecl& d) { return d.name == args.part; });
    if (found == pipeline->drivers.end() || found->kind != "lua")
      return core::fail(core::Errc::invalid_argument,
                        args.pipeline + ": no driver \"lua\" named '" + args.part + "' in the pipeline");
    auto options = acq::lua_driver_options(*pipeline, *found);
    if (!options) return options;
    o = std::move(*options);
  } else {
    o.part = args.part.empty() ? "lua" : args.part;
    o.script = args.script;
    o.function = args.function;
    o.mode = args.per_block ? acq::LuaCallMode::per_block : acq::LuaCallMode::period;
    o.period_s = args.period_s;
    auto dtype = core::parse_dtype(args.dtype);
    if (!dtype) return tl::make_unexpected(dtype.error());
    for (const std::string& name : args.channels) {
      core::ChannelSpec spec;
      spec.name = name;
      spec.dtype = *dtype;
      spec.rate_hz = args.rate_hz > 0 ? args.rate_hz : args.period_s > 0 ? 1.0 / args.period_s : 0;
      spec.samples_per_block = args.block;
      spec.units = args.units;
      spec.labels = {"lua"};
      spec.ring_blocks = args.writer.ring;
      spec.full_policy = args.writer.full_policy();
      spec.wait_timeout_ns = args.writer.wait_timeout_ns();
      o.channels.push_back(spec);
    }
    o.memory_mb = args.memory_mb;
    o.instructions = args.instructions;
  }
  o.duration_s = args.seconds;
  o.max_calls = args.calls;
  if (auto ok = acq::validate(o); !ok) return tl::make_unexpected(ok.error());
  return o;
}

void print_text(const acq::LuaDriverOptions& o, const acq::LuaDriverReport& r) {
  fmt::print("lua driver '{}' ({} {}): {} calls in {:.3f} s, {}\n", o.part, o.script, o.function, r.calls, r.elapsed_s,
             r.stopped ? "stopped by a signal" : "limit reached");
  fmt::print("  {} errors: {} Lua errors, {} overruns of the instruction budget, {} out of memory, {} bad returns; "
             "{} deadlines skipped late\n",
             r.errors, r.lua_errors, r.overruns, r.memory_errors, r.bad_returns, r.late);
  fmt::print("  {} keys written, {} busy\n", r.keys_written, r.keys_busy);
  for (const acq::LuaChannelReport& c : r.channels)
    fmt::print("  {:<16} {:<8} {:>10} samples {:>8} blocks {:>6} dropped {:>6} gaps{}\n", c.name,
               c.created ? "created" : "attached", c.samples, c.blocks_published, c.blocks_dropped, c.gap_blocks,
               c.saturated > 0 ? fmt::format(" {:>8} saturated", c.saturated) : "");
}

void print_json_report(const LuaDriverArgs& args, const acq::LuaDriverOptions& o, const acq::LuaDriverReport& r) {
  JsonArray channels;
  for (const acq::LuaChannelReport& c : r.channels) {
    JsonObject one;
    one.text("name", c.name)
        .boolean("created", c.created)
        .number("samples", c.samples)
        .number("blocks_published", c.blocks_published)
        .number("blocks_dropped", c.blocks_dropped)
        .number("samples_dropped", c.samples_dropped)
        .number("saturated", c.saturated)
        .number("gap_blocks", c.gap_blocks);
    channels.raw(one.str());
  }
  JsonObject out;
  out.text("arena", args.where)
      .text("part", o.part)
      .text("script", o.script)
      .text("function", o.function)
      .boolean("stopped", r.stopped)
      .number("calls", r.calls)
      .number("errors", r.errors)
      .number("lua_errors", r.lua_errors)
      .number("overruns", r.overruns)
      .number("memory_errors", r.memory_errors)
      .number("bad_returns", r.bad_returns)
      .number("late", r.late)
      .number("recorded", r.recorded)
      .number("keys_written", r.keys_written)
      .number("keys_busy", r.keys_busy)
      .number("errors_logged", r.errors_logged)
      .real("elapsed_s", r.elapsed_s)
      .raw("channels", channels.str());
  print_json(out);
}

int run_lua_driver_command(const LuaDriverArgs& args) {
  if (!args.pipeline.empty() && args.part.empty()) return report_usage("--pipeline needs --part NAME");
  if (args.pipeline.empty() && args.script.empty())
    return report_usage("give --pipeline FILE --part NAME, or --script FILE with --period or --per-block");
  auto options = to_options(args);
  if (!options) return report_error("", options.error());
  auto arena = open_arena(args.where, Access::read_write);
  if (!arena) return kExitError;
  const StopSignals signals;
  auto report = acq::run_lua_driver(*arena, *options, StopSignals::flag());
  if (!report) return report_error("", report.error());
  if (args.json)
    print_json_report(args, *options, *report);
  else
    print_text(*options, *report);
  return kExitOk;
}

}  // namespace

void add_lua_driver_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<LuaDriverArgs>();
  CLI::App* sub = app.add_subcommand(
      "lua-driver", "Acquire with a Lua function: called every --period seconds (absolute deadlines) or once per "
                    "block, it returns samples for channels and values for keys (acquisition/lua/README.md)");
  add_name_option(*sub, args->where);
  sub->add_option("--pipeline", args->pipeline, "pipeline file whose driver \"lua\" to run (with --part)");
  sub->add_option("--part", args->part, "the driver's name in the pipeline; without --pipeline, names the counter "
                                        "keys (default: lua)");
  sub->add_option("--script", args->script, "the .lua file (without --pipeline)");
  sub->add_option("--function", args->function, "the global function to call")->capture_default_str();
  sub->add_option("--period", args->period_s, "seconds between calls")->check(CLI::PositiveNumber);
  sub->add_flag("--per-block", args->per_block, "call once per block period (block / rate) of the channels");
  sub->add_option("--channels", args->channels, "channels it writes; created if missing, else attached");
  sub->add_option("--rate", args->rate_hz, "sample rate of a created channel in Hz (default: 1 / period)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--block", args->block, "samples per block of a created channel")
      ->capture_default_str()
      ->check(CLI::Range(1U, core::kMaxSamplesPerBlock));
  sub->add_option("--dtype", args->dtype, "sample type of a created channel")->capture_default_str();
  sub->add_option("--units", args->units, "units of a created channel");
  sub->add_option("--memory-mb", args->memory_mb, "the script's heap limit in MiB")
      ->capture_default_str()
      ->check(CLI::Range(1U, lua_sandbox::kMaxMemoryMb));
  sub->add_option("--instructions", args->instructions, "Lua instructions one call may run; 0: no limit")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--seconds", args->seconds, "stop after this many seconds")->check(CLI::PositiveNumber);
  sub->add_option("--calls", args->calls, "stop after this many calls")->check(CLI::PositiveNumber);
  add_channel_writer_options(*sub, args->writer, "lua-driver");
  add_json_flag(*sub, args->json);
  bind_action(*sub, action, args, &run_lua_driver_command);
}

}  // namespace weir::tools

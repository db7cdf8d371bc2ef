// `weir shard`: the shard host. Runs one shard (a built-in kind or a third-party .so) on a channel,
// or on every channel carrying a label, as a registered consumer of the arena; stops cleanly on
// SIGINT/SIGTERM or --duration and prints what it did. `--list` and `describe` show the kinds and a
// shard's parameters. Library: dsp_shards/host.
#include <signal.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "command.hpp"
#include "weir/core/channel.hpp"
#include "weir/shard_host/builtin.hpp"
#include "weir/shard_host/host.hpp"
#include "weir/shard_host/loader.hpp"
#include "weir/shard_host/params.hpp"
#include "weir/tools/arena_access.hpp"
#include "weir/tools/output.hpp"
#include "weir/tools/stop_signals.hpp"

namespace weir::tools {
namespace {

namespace sh = weir::shard_host;

constexpr double kNsPerUs = 1e3;
constexpr double kMaxSeconds = 1e9;

struct ShardArgs {
  std::string where;  // or "describe" for `weir shard describe KIND`
  std::string kind;
  std::string input;
  std::vector<std::string> params;
  std::string output;
  std::string policy = "lossy";
  std::string instance;
  double duration_s = 0;
  double watchdog_s = sh::kDefaultWatchdogS;
  double batch_ms = static_cast<double>(sh::kDefaultBatchNs) / 1e6;
  std::string describe;
  bool list = false;
  bool json = false;
};

std::string us(std::uint64_t ns) { return fmt::format("{:.1f} us", static_cast<double>(ns) / kNsPerUs); }

std::string join(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& s : items) text += (text.empty() ? "" : ", ") + s;
  return text;
}

// The range or choices column of `describe`.
std::string limits_of(const weir_shard_param& p) {
  if (p.type == WEIR_PARAM_TEXT && p.choices != nullptr) return p.choices;
  if ((p.type == WEIR_PARAM_INT || p.type == WEIR_PARAM_REAL) && !(p.min == 0 && p.max == 0))
    return fmt::format("[{}, {}]", format_real(p.min), format_real(p.max));
  return "";
}

int run_list(const ShardArgs& args) {
  JsonArray kinds;
  if (!args.json) fmt::print("built-in shard kinds (or give a path to a .so):\n");
  for (const sh::BuiltinKind& k : sh::builtin_kinds()) {
    auto shard = sh::load_shard(k.name);
    const std::string description = shard ? (shard->api().description != nullptr ? shard->api().description : "")
                                          : "unusable: " + shard.error().what;
    if (args.json) {
      JsonObject o;
      o.text("name", k.name).text("description", description).boolean("usable", shard.has_value());
      kinds.raw(o.str());
    } else {
      fmt::print("  {:<10} {}\n", k.name, description);
    }
  }
  for (const sh::PluginKind& k : sh::plugin_kinds()) {  // located, not loaded: libtorch is heavy
    const auto file = sh::find_plugin_file(k);
    const std::string description = file ? "plugin " + *file : "plugin not built (needs " + std::string(k.needs) + ")";
    if (args.json) {
      kinds.raw(JsonObject{}.text("name", k.name).text("description", description).boolean("usable", file.has_value()).str());
    } else {
      fmt::print("  {:<10} {}\n", k.name, description);
    }
  }
  if (args.json) print_json(JsonObject{}.raw("kinds", kinds.str()));
  return kExitOk;
}

int run_describe(const ShardArgs& args, const std::string& kind) {
  auto shard = sh::load_shard(kind);
  if (!shard) return report_error("shard describe", shard.error());
  const weir_shard_api& api = shard->api();
  const char* description = api.description != nullptr ? api.description : "";
  if (args.json) {
    JsonArray params;
    for (std::uint32_t i = 0; i < api.param_count; ++i) {
      const weir_shard_param& p = api.params[i];
      JsonObject o;
      o.text("name", p.name).text("type", sh::param_type_name(p.type)).boolean("required", p.default_value == nullptr);
      if (p.default_value != nullptr) o.text("default", p.default_value);
      if (p.type == WEIR_PARAM_INT || p.type == WEIR_PARAM_REAL) o.real("min", p.min).real("max", p.max);
      if (p.choices != nullptr) o.text("choices", p.choices);
      o.text("help", p.help != nullptr ? p.help : "");
      params.raw(o.str());
    }
    JsonObject out;
    out.text("kind", api.name)
        .text("source", shard->builtin() ? "built-in" : kind)
        .text("description", description)
        .text("input_dtypes", sh::dtype_list(api.input_dtypes))
        .raw("params", params.str());
    print_json(out);
    return kExitOk;
  }
  fmt::print("shard '{}' ({}): {}\n", api.name, shard->builtin() ? "built-in" : kind, description);
  fmt::print("  input dtypes: {}\n", sh::dtype_list(api.input_dtypes));
  if (api.param_count == 0) {
    fmt::print("  no parameters\n");
    return kExitOk;
  }
  // Columns as wide as their widest cell, so long choices never run into the help text.
  std::vector<std::array<std::string, 5>> rows{{"PARAMETER", "TYPE", "DEFAULT", "RANGE/CHOICES", "HELP"}};
  for (std::uint32_t i = 0; i < api.param_count; ++i) {
    const weir_shard_param& p = api.params[i];
    rows.push_back({p.name, sh::param_type_name(p.type),
                    p.default_value != nullptr ? fmt::format("'{}'", p.default_value) : "(required)", limits_of(p),
                    p.help != nullptr ? p.help : ""});
  }
  std::array<std::size_t, 4> width{};
  for (const auto& row : rows)
    for (std::size_t c = 0; c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
  for (const auto& row : rows)
    fmt::print("  {:<{}}  {:<{}}  {:<{}}  {:<{}}  {}\n", row[0], width[0], row[1], width[1], row[2], width[2], row[3],
               width[3], row[4]);
  return kExitOk;
}

void print_started(const std::string& where, const sh::HostOptions& o, const std::vector<sh::InstanceReport>& list) {
  std::vector<std::string> inputs;
  for (const auto& i : list) inputs.push_back(i.input);
  if (list.size() > 1 || (list.size() == 1 && list.front().input != o.input))
    fmt::print("label '{}' matches {} channel{}: {}; one instance each, in this process\n", o.input, list.size(),
               list.size() == 1 ? "" : "s", join(inputs));
  for (const auto& i : list)
    fmt::print("shard {} on {}: instance '{}' reads '{}' ({}) -> {}\n", i.kind, where, i.instance, i.input,
               core::policy_name(i.policy), i.outputs.empty() ? std::string{"no outputs"} : join(i.outputs));
  std::fflush(stdout);  // a supervisor or test reading the pipe sees it before the first block
}

void print_summary(const sh::HostReport& r) {
  fmt::print("shard {} {} after {:.3f} s; woke {} times{}\n", r.kind,
             r.stopped ? "stopped by a signal" : "reached its duration", r.elapsed_s, r.wakes,
             r.batch_sleep_ns > 0 ? fmt::format(" (gathering blocks for {:.1f} ms while they stream)",
                                                static_cast<double>(r.batch_sleep_ns) / 1e6)
                                  : std::string(" (once per block at most)"));
  for (const auto& i : r.instances)
    fmt::print("  {}: blocks in {}, out {}, lost {}, skipped {}, errors {}; process p50 {}, p99 {}\n", i.instance,
               i.blocks_in, i.blocks_out, i.blocks_lost, i.blocks_skipped, i.errors, us(i.p50_ns), us(i.p99_ns));
}

void print_summary_json(const std::string& where, const sh::HostReport& r) {
  JsonArray instances;
  for (const auto& i : r.instances) {
    JsonArray outputs;
    for (const std::string& name : i.outputs) outputs.text(name);
    JsonObject o;
    o.text("instance", i.instance)
        .text("input", i.input)
        .text("policy", core::policy_name(i.policy))
        .raw("outputs", outputs.str())
        .number("blocks_in", i.blocks_in)
        .number("blocks_out", i.blocks_out)
        .number("blocks_lost", i.blocks_lost)
        .number("blocks_skipped", i.blocks_skipped)
        .number("errors", i.errors)
        .number("p50_ns", i.p50_ns)
        .number("p99_ns", i.p99_ns);
    instances.raw(o.str());
  }
  JsonObject out;
  out.text("arena", where)
      .text("shard", r.shard)
      .text("kind", r.kind)
      .boolean("by_label", r.by_label)
      .boolean("stopped", r.stopped)
      .real("elapsed_s", r.elapsed_s)
      .number("wakes", r.wakes)
      .real("batch_ms", static_cast<double>(r.batch_sleep_ns) / 1e6)
      .raw("instances", instances.str());
  print_json(out);
}

int run_shard(const ShardArgs& args) {
  if (args.list) return run_list(args);
  if (!args.describe.empty()) return run_describe(args, args.describe);
  if (args.where == "describe") {
    if (args.kind.empty()) return report_usage("shard describe: name a kind or a .so path");
    return run_describe(args, args.kind);
  }
  if (args.where.empty() || args.kind.empty()) return report_usage("shard: give an arena NAME and a shard KIND");
  if (args.input.empty()) return report_usage("shard: --input CHANNEL|LABEL is required");
  sh::HostOptions o;
  o.shard = args.kind;
  o.input = args.input;
  for (const std::string& text : args.params) {
    auto p = sh::parse_param_arg(text);
    if (!p) return report_usage(p.error().what);
    o.params.push_back(std::move(*p));
  }
  auto policy = core::parse_policy(args.policy);
  if (!policy) return report_usage(policy.error().what);
  o.policy = *policy;
  o.output_base = args.output;
  o.instance = args.instance;
  o.duration_s = args.duration_s;
  o.watchdog_s = args.watchdog_s;
  o.batch_ns = std::llround(args.batch_ms * 1e6);
  if (!args.json) o.on_started = [&](const std::vector<sh::InstanceReport>& list) {
      print_unless_closed([&] { print_started(args.where, o, list); });
    };

  auto arena = open_arena(args.where, Access::read_write);
  if (!arena) return kExitError;
  const StopSignals signals(Sigpipe::ignore);  // a log no one reads any more (EPIPE) does not stop the host
  auto report = sh::run_host(*arena, o, StopSignals::flag());
  if (!report) return report_error("shard", report.error());
  print_unless_closed([&] {
    if (args.json) {
      print_summary_json(args.where, *report);
    } else {
      print_summary(*report);
    }
  });
  return kExitOk;
}

}  // namespace

void add_shard_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<ShardArgs>();
  CLI::App* sub = app.add_subcommand(
      "shard", "Run a DSP shard (built-in kind or .so) on a channel, or on every channel with a label; "
               "`weir shard --list`, `weir shard describe KIND|PATH`");
  sub->add_option("NAME", args->where, "arena: shm name, file path containing '/', or memfd:NAME");
  sub->add_option("KIND", args->kind, "built-in kind (see --list) or a path to a shard .so");
  sub->add_option("--input,-i", args->input, "input: a channel name, or a label (one instance per channel)");
  sub->add_option("--param,-p", args->params, "a shard parameter, name=value (repeat for more)");
  sub->add_option("--output,-o", args->output, "base name of the outputs (default: the input channel's name)");
  sub->add_option("--policy", args->policy, "consumer policy: lossy (never holds the writer), lossless, latest")
      ->capture_default_str()
      ->check(CLI::IsMember({"lossy", "lossless", "latest"}));
  sub->add_option("--instance", args->instance, "consumer name in the arena (default: KIND.CHANNEL)");
  sub->add_option("--duration", args->duration_s, "stop after this many seconds (default: until SIGINT/SIGTERM)")
      ->check(CLI::Range(0.0, kMaxSeconds));
  sub->add_option("--watchdog", args->watchdog_s, "abort the host when one block takes longer (seconds, 0: off)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, kMaxSeconds));
  sub->add_option("--batch-ms", args->batch_ms,
                  "while blocks stream in, gather them this long between wake-ups (ms, 0: wake per block; adds as "
                  "much latency)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1000.0));
  sub->add_option("--describe", args->describe, "print the parameters of a kind or .so and exit");
  sub->add_flag("--list", args->list, "print the built-in kinds and exit");
  add_json_flag(*sub, args->json);
  bind_action(*sub, action, args, &run_shard);
}

}  // namespace weir::tools

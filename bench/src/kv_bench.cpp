// `weir bench kv|signals`: argument parsing and the choice of suite; for kv, the bench arena's
// lifetime, ratios and targets. The signals suite lives in signal_bench.cpp.
#include "extra_suites.hpp"
#include "suite_report.hpp"
#include "weir/bench/kv_bench.hpp"

#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <exception>
#include <optional>
#include <string_view>

#include "cases.hpp"
#include "signal_cases.hpp"

namespace weir::bench {

namespace {

constexpr const char* kUsage =
    "usage: weir bench kv|signals|vectors|channels [--json] [--reps N] [--quick]\n"
    "  kv         KvStore get/set against a bare seqlock and memcpy\n"
    "  signals    signal-group wake latency against a bare futex, and publish cost\n"
    "  vectors    top-10 search against a dot-product loop and a memory stream\n"
    "  channels   channel throughput against an SPSC ring, a Unix socket and ZeroMQ\n"
    "  --json     one JSON object per result line on stdout\n"
    "  --reps N   repetitions per case, 1..1000 (default 5); the median is reported\n"
    "  --quick    a tenth of the work per repetition (noisier; for tests)\n";

// Every ratio and target of the report, in one place.
constexpr Comparison kComparisons[] = {
    {"kv.set.64B.key", "base.seqlock.publish.64B", Goal::below_ns, 30.0},
    {"kv.get.64B.key", "base.seqlock.read.64B", Goal::below_ns, 15.0},
    {"kv.set.4KiB.key", "base.seqlock.publish.4KiB", Goal::ratio_at_most, 2.0},
    {"kv.get.4KiB.key", "base.seqlock.read.4KiB", Goal::ratio_at_most, 2.0},
    {"kv.set.64B.handle", "base.seqlock.publish.64B", Goal::ratio_at_most, 1.5},
    {"kv.get.64B.handle", "base.seqlock.read.64B", Goal::ratio_at_most, 1.5},
    {"kv.set.4KiB.handle", "base.seqlock.publish.4KiB", Goal::ratio_at_most, 1.5},
    {"kv.get.4KiB.handle", "base.seqlock.read.4KiB", Goal::ratio_at_most, 1.5},
    {"kv.get.miss", "kv.get.64B.key", Goal::ratio_at_most, 2.0},
    {"kv.view.64B.key", "base.seqlock.read.64B", Goal::none, 0.0},
    {"kv.xproc.1w1r.64B.set", "base.xproc.1w1r.64B.set", Goal::none, 0.0},
    {"kv.xproc.1w1r.64B.get", "base.xproc.1w1r.64B.get", Goal::none, 0.0},
    {"base.seqlock.publish.64B", "base.memcpy.64B", Goal::none, 0.0},
    {"base.seqlock.read.64B", "base.memcpy.64B", Goal::none, 0.0},
    {"base.seqlock.publish.4KiB", "base.memcpy.4KiB", Goal::none, 0.0},
    {"base.seqlock.read.4KiB", "base.memcpy.4KiB", Goal::none, 0.0},
};

// Returns the config, or the exit code to return at once (usage printed).
std::optional<Config> parse_args(const std::vector<std::string>& args, int& exit_code) {
  exit_code = kExitUsage;
  if (args.empty() || (args[0] != "kv" && args[0] != "signals")) {
    std::fputs(args.empty() ? "weir bench: which benchmark? ('kv', 'signals', 'vectors' or 'channels')\n"
                            : "weir bench: unknown benchmark ('kv', 'signals', 'vectors' or 'channels')\n",
               stderr);
    std::fputs(kUsage, stderr);
    return std::nullopt;
  }
  return parse_suite_options(args, kUsage, exit_code);
}

int run_kv_suite(const Config& config) {
  const std::string arena_name = "bench." + std::to_string(::getpid());
  core::ArenaOptions options;
  options.slot_count = kArenaSlots;
  options.key_bytes = kArenaKeyBytes;
  options.value_bytes = kLargeBytes;

  Results results;
  const bool ran = run_in_arena(arena_name, options, [&](core::Arena& arena) {
    run_baseline_cases(config, results);
    run_kv_cases(config, arena, results);
    run_xproc_cases(config, arena, arena_name, results);
  });
  if (!ran) return kExitFailed;

  compare(results, kComparisons);
  if (config.json) {
    print_json(results.rows());
  } else {
    char title[128];
    std::snprintf(title, sizeof title, "weir bench kv: ns/op, median/min/max of %d repetitions of ~%lld ms each%s",
                  config.reps, static_cast<long long>(config.rep_ns() / 1'000'000), config.quick ? " (--quick)" : "");
    print_table(results.rows(), title);
  }
  return exit_status(results);
}

}  // namespace

int run_bench(const std::vector<std::string>& args) {
  if (!args.empty() && args[0] == "vectors") return run_vector_suite(args);
  if (!args.empty() && args[0] == "channels") return run_channel_suite(args);
  if (!args.empty() && args[0] == "shards") return run_shard_suite(args);
  if (!args.empty() && args[0] == "recorder") return run_recorder_suite(args);
  if (!args.empty() && args[0] == "kernels") return run_kernel_suite(args);
  if (!args.empty() && args[0] == "udp") return run_udp_suite(args);
  int exit_code = kExitOk;
  const auto maybe_config = parse_args(args, exit_code);
  if (!maybe_config) return exit_code;
  warn_if_unoptimised();
  return args[0] == "signals" ? run_signals_suite(*maybe_config) : run_kv_suite(*maybe_config);
}

}  // namespace weir::bench

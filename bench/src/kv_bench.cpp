// `weir bench SUITE` (weir_bench): argument parsing and the choice of suite; for kv, the bench
// arena's lifetime, ratios and targets. The signals suite lives in signal_bench.cpp, the others in
// the files extra_suites.hpp names.
#include "extra_suites.hpp"
#include "suite_report.hpp"
#include "weir/bench/kv_bench.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <exception>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cases.hpp"
#include "signal_cases.hpp"

namespace weir::bench {

namespace {

constexpr const char* kUsage =
    "usage: weir bench SUITE [--json] [--reps N] [--quick] [options of the suite]\n"
    "  kv         KvStore get/set against a bare seqlock and memcpy\n"
    "  signals    signal-group wake latency against a bare futex, and publish cost\n"
    "  vectors    top-10 search against a dot-product loop and a memory stream (--ann-1m, --ann-only)\n"
    "  channels   channel throughput against an SPSC ring, a Unix socket and ZeroMQ\n"
    "  shards     the fft shard against bare FFTW, every shard's time per block\n"
    "  recorder   the HDF5 recorder against a bare HDF5 loop and plain write() (--only LINE)\n"
    "  kernels    each shard's process() against the bare kernel it is built from\n"
    "  udp        the UDP driver against a bare recvmmsg loop\n"
    "  pipeline   a pipeline under the supervisor, each stage next to its kernel alone\n"
    "             (weir bench pipeline --help: its options)\n"
    "  --json     one JSON object per result line on stdout\n"
    "  --reps N   repetitions per case, 1..1000 (default 5); the median is reported\n"
    "  --quick    a tenth of the work per repetition (noisier; for tests)\n"
    "  --weir P   the weir executable (default: $WEIR_CLI, weir beside weir_bench, ../tools/weir from its directory)\n";

constexpr const char* kSuiteList = "'kv', 'signals', 'vectors', 'channels', 'shards', 'recorder', 'kernels', 'udp' or 'pipeline'";

// The options only the pipeline suite takes (pipeline_bench.cpp).
constexpr std::string_view kPipelineOptions[] = {"--channels", "--rate",    "--block",    "--duration", "--fir",
                                                 "--processes", "--threads", "--batch-ms", "--dir"};

// `arg` is `option` or `option=VALUE`.
bool is_option(std::string_view arg, std::string_view option) {
  return arg == option || (arg.starts_with(option) && arg.size() > option.size() && arg[option.size()] == '=');
}

// Takes --weir PATH (or --weir=PATH) out of args; returns PATH ("" when not given).
std::string take_weir_option(std::vector<std::string>& args) {
  std::string path;
  for (std::size_t i = 0; i < args.size();) {
    if (args[i] == "--weir" && i + 1 < args.size()) {
      path = args[i + 1];
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i), args.begin() + static_cast<std::ptrdiff_t>(i + 2));
    } else if (is_option(args[i], "--weir")) {
      path = args[i].substr(std::string_view("--weir=").size());
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  return path;
}

// A usage error when an option of one suite comes with another; prints it. kExitOk when none.
int check_suite_options(const std::vector<std::string>& args) {
  const std::string& suite = args[0];
  bool only = false, pipeline = false;
  for (std::size_t i = 1; i < args.size(); ++i) {
    only = only || is_option(args[i], "--only");
    for (const std::string_view option : kPipelineOptions) pipeline = pipeline || is_option(args[i], option);
  }
  if (only && suite != "recorder") {
    std::fputs("weir bench: --only is an option of the recorder suite only\n", stderr);
    return kExitUsage;
  }
  if (pipeline && suite != "pipeline") {
    std::fputs("weir bench: --channels, --rate, --block, --duration, --fir, --processes, --threads, --batch-ms and --dir are "
               "options of the pipeline suite only\n",
               stderr);
    return kExitUsage;
  }
  return kExitOk;
}

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

int run_bench(const std::vector<std::string>& all_args) {
  std::vector<std::string> args = all_args;
  const WeirExe weir = find_weir_exe(take_weir_option(args));
  add_plugin_dir_of(weir);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    if (!args.empty()) {
      std::fputs(kUsage, stdout);
      return kExitOk;
    }
    std::fprintf(stderr, "weir bench: which suite? (%s)\n%s", kSuiteList, kUsage);
    return kExitUsage;
  }
  const auto is_suite = [](std::string_view a) {
    return a == "kv" || a == "signals" || a == "vectors" || a == "channels" || a == "shards" || a == "recorder" ||
           a == "kernels" || a == "udp" || a == "pipeline";
  };
  if (args[0].starts_with("-"))  // options before the suite's name (`weir bench --reps 3 kv`): name first
    if (const auto named = std::find_if(args.begin(), args.end(), is_suite); named != args.end())
      std::rotate(args.begin(), named, named + 1);
  const std::string& suite = args[0];
  if (!is_suite(suite)) {
    std::fprintf(stderr, "weir bench: unknown suite '%s' (%s)\n%s", suite.c_str(), kSuiteList, kUsage);
    return kExitUsage;
  }
  if (const int misuse = check_suite_options(args); misuse != kExitOk) return misuse;
  if (suite == "pipeline") return run_pipeline_suite(args, weir);
  if (suite == "vectors") return run_vector_suite(args);
  if (suite == "channels") return run_channel_suite(args);
  if (suite == "shards") return run_shard_suite(args);
  if (suite == "recorder") return run_recorder_suite(args);
  if (suite == "kernels") return run_kernel_suite(args);
  if (suite == "udp") return run_udp_suite(args);
  int exit_code = kExitOk;
  const auto maybe_config = parse_suite_options(args, kUsage, exit_code);
  if (!maybe_config) return exit_code;
  warn_if_unoptimised();
  return args[0] == "signals" ? run_signals_suite(*maybe_config) : run_kv_suite(*maybe_config);
}

}  // namespace weir::bench

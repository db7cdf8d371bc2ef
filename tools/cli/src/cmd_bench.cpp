#include "cmd_bench.hpp"

#include <memory>

#include <fmt/format.h>

#include "cmd_bench_pipeline.hpp"
#include "command.hpp"
#include "weir/bench/kv_bench.hpp"
#include "weir/tools/output.hpp"

namespace weir::tools {

std::vector<std::string> bench_arguments(const BenchOptions& options) {
  std::vector<std::string> args{options.suite, "--reps", fmt::format("{}", options.reps)};
  if (options.quick) args.emplace_back("--quick");
  if (options.json) args.emplace_back("--json");
  if (options.ann_1m) args.emplace_back("--ann-1m");
  if (options.ann_only) args.emplace_back("--ann-only");
  if (!options.only.empty()) {
    args.emplace_back("--only");
    args.push_back(options.only);
  }
  return args;
}

int run_bench_kv(const BenchOptions& options) {
  return weir::bench::run_bench(bench_arguments(options));
}

namespace {

struct AllBenchOptions {
  BenchOptions suite;
  PipelineBenchOptions pipeline;
  bool pipeline_options = false;  // any option only the pipeline suite takes was given
};

int run_bench_any(const AllBenchOptions& options) {
  if (options.suite.suite == "pipeline") {
    PipelineBenchOptions p = options.pipeline;
    p.json = options.suite.json;
    p.quick = options.suite.quick;
    p.reps = options.suite.reps;
    return run_bench_pipeline(p);
  }
  if (!options.suite.only.empty() && options.suite.suite != "recorder") {
    print_error("weir bench: --only is an option of the recorder suite only");
    return kExitUsage;
  }
  if (options.pipeline_options) {
    print_error("weir bench: --channels, --rate, --block, --duration, --fir, --processes, --threads, --batch-ms and --dir are "
                "options of the pipeline suite only");
    return kExitUsage;
  }
  return run_bench_kv(options.suite);
}

}  // namespace

void add_bench_command(CLI::App& app, Action& action) {
  auto all = std::make_shared<AllBenchOptions>();
  BenchOptions* options = &all->suite;
  PipelineBenchOptions* pipe = &all->pipeline;
  CLI::App* sub = app.add_subcommand("bench", "Run a benchmark suite against a private arena");
  sub->add_option("SUITE", options->suite, "benchmark suite")->required()->check(CLI::IsMember({"kv", "signals", "vectors", "channels", "shards", "recorder", "pipeline", "udp"}));
  sub->add_option("--reps", options->reps, "repetitions per benchmark")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->add_flag("--quick", options->quick, "short runs, for a smoke test");
  sub->add_flag("--ann-1m", options->ann_1m, "vectors: also the ann rows over 1M x 128 (slow to build)");
  sub->add_flag("--ann-only", options->ann_only, "vectors: the ann rows alone");
  add_json_flag(*sub, options->json);
  sub->add_option("--only", options->only, "recorder: one line")
      ->check(CLI::IsMember({"live", "drain", "fsync", "snapshot", "codec", "encoded"}));
  const auto mark = [all](auto) { all->pipeline_options = true; };
  sub->add_option("--channels", pipe->channels, "pipeline: simulated f32 channels")->capture_default_str()->each(mark);
  sub->add_option("--rate", pipe->rate_msps, "pipeline: aggregate input, MS/s")->capture_default_str()->each(mark);
  sub->add_option("--block", pipe->block, "pipeline: samples per block")->capture_default_str()->each(mark);
  sub->add_option("--duration", pipe->duration_s, "pipeline: seconds per run")->capture_default_str()->each(mark);
  sub->add_flag("--fir", pipe->fir, "pipeline: a filter shard (101 taps, decimate 4) on each channel too")->each(mark);
  auto* processes = sub->add_flag("--processes", pipe->processes, "pipeline: shards as processes (thread = false)")->each(mark);
  sub->add_flag("--threads", pipe->threads, "pipeline: shards as threads of weir run (thread = true)")
      ->excludes(processes)
      ->each(mark);
  sub->add_option("--batch-ms", pipe->batch_ms, "pipeline: the shards' batch_ms (default: the host's)")->each(mark);
  sub->add_option("--dir", pipe->dir, "pipeline: where recordings go (default: the temp directory)")->each(mark);
  bind_action(*sub, action, all, &run_bench_any);
}

}  // namespace weir::tools

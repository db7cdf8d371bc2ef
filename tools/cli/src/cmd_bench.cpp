#include "cmd_bench.hpp"

#include <memory>

#include <fmt/format.h>

#include "command.hpp"
#include "weir/bench/kv_bench.hpp"

namespace weir::tools {

std::vector<std::string> bench_arguments(const BenchOptions& options) {
  std::vector<std::string> args{options.suite, "--reps", fmt::format("{}", options.reps)};
  if (options.quick) args.emplace_back("--quick");
  if (options.json) args.emplace_back("--json");
  return args;
}

int run_bench_kv(const BenchOptions& options) {
  return weir::bench::run_bench(bench_arguments(options));
}

void add_bench_command(CLI::App& app, Action& action) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* sub = app.add_subcommand("bench", "Run a benchmark suite against a private arena");
  sub->add_option("SUITE", options->suite, "benchmark suite")->required()->check(CLI::IsMember({"kv", "signals", "vectors", "channels", "shards", "recorder", "udp"}));
  sub->add_option("--reps", options->reps, "repetitions per benchmark")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->add_flag("--quick", options->quick, "short runs, for a smoke test");
  add_json_flag(*sub, options->json);
  bind_action(*sub, action, options, &run_bench_kv);
}

}  // namespace weir::tools

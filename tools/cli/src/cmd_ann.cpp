// `weir ann ARENA PART`: the nearest-neighbour service of one vector partition (ann/).
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "command.hpp"
#include "time_units.hpp"
#include "weir/ann/service.hpp"
#include "weir/tools/arena_access.hpp"
#include "weir/tools/output.hpp"
#include "weir/tools/stop_signals.hpp"

namespace weir::tools {
namespace {

constexpr double kNsPerS = 1e9;
constexpr double kMaxDurationS = 1e9;        // --duration past this is refused (31 years)
constexpr std::uint32_t kMaxLinks = 256;      // --m
constexpr std::uint32_t kMaxBreadth = 1U << 16;  // --ef, --ef-construction
constexpr std::uint32_t kMaxThreads = 1024;   // --threads

constexpr std::array<std::pair<std::string_view, core::Metric>, 3> kAnnMetrics{{
    {"cosine", core::Metric::cosine},
    {"dot", core::Metric::dot},
    {"l2", core::Metric::l2},
}};

struct AnnArgs {
  std::string where;
  std::string part;
  ann::ServiceOptions options;
  std::string metric = "cosine";
  double duration_s = 0;
  bool json = false;
};

std::string report_json(const AnnArgs& args, const ann::ServiceReport& r) {
  return JsonObject{}
      .text("arena", args.where)
      .text("part", args.part)
      .text("metric", core::metric_name(args.options.metric))
      .text("kernel", core::kernel_name(r.kernel))
      .number("m", args.options.m)
      .number("ef_construction", args.options.ef_construction)
      .number("ef", args.options.ef)
      .number("threads", r.threads)
      .number("indexed", r.indexed)
      .number("built", r.built)
      .real("build_ms", static_cast<double>(r.build_ns) / kNsPerMs)
      .number("inserts", r.inserts)
      .number("deletes", r.deletes)
      .number("rescans", r.rescans)
      .number("lost", r.lost)
      .number("queries", r.queries)
      .number("refused", r.refused)
      .str();
}

int run_ann(const AnnArgs& args) {
  AnnArgs a = args;
  for (const auto& [name, metric] : kAnnMetrics)
    if (name == a.metric) a.options.metric = metric;
  a.options.duration_ns = static_cast<std::int64_t>(std::llround(a.duration_s * kNsPerS));
  auto arena = open_arena(a.where, Access::read_write);
  if (!arena) return kExitError;
  const StopSignals signals(Sigpipe::ignore);
  const auto serving = [&](const ann::ServiceReport& r) {
    print_unless_closed([&] {
      std::fprintf(stderr, "weir ann: %s of %s: indexed %llu vectors in %.1f ms (%u threads, kernel %s); serving\n",
                   a.part.c_str(), arena->location().describe().c_str(), static_cast<unsigned long long>(r.built),
                   static_cast<double>(r.build_ns) / kNsPerMs, r.threads, core::kernel_name(r.kernel));
      std::fflush(stderr);
    });
  };
  auto report = ann::run_service(*arena, a.part, a.options, StopSignals::flag(), serving);
  if (!report) return report_error("", report.error());
  print_unless_closed([&] {
    if (a.json) {
      std::fputs(report_json(a, *report).c_str(), stdout);
      std::fputc('\n', stdout);
      return;
    }
    fmt::print("ann {} of {}: {} vectors indexed (built {} in {:.1f} ms), {} inserts, {} deletes, {} rescans, "
               "{} queries answered ({} refused)\n",
               a.part, arena->location().describe(), report->indexed, report->built,
               static_cast<double>(report->build_ns) / kNsPerMs, report->inserts, report->deletes, report->rescans,
               report->queries, report->refused);
  });
  return kExitOk;
}

}  // namespace

void add_ann_search_command(CLI::App& app, Action& action);  // cmd_ann_search.cpp

void add_ann_commands(CLI::App& app, Action& action) {
  auto args = std::make_shared<AnnArgs>();
  CLI::App* sub = app.add_subcommand(
      "ann", "Serve nearest-neighbour queries over the vectors of the keys labelled PART (an HNSW index "
             "that follows their changes); ask with `weir vector search`");
  add_name_option(*sub, args->where);
  sub->add_option("PART", args->part, "the partition: the label its keys carry")->required();
  sub->add_option("--m", args->options.m, "HNSW links per node")->capture_default_str()->check(CLI::Range(2U, kMaxLinks));
  sub->add_option("--ef-construction", args->options.ef_construction, "HNSW candidate list while linking")
      ->capture_default_str()
      ->check(CLI::Range(1U, kMaxBreadth));
  sub->add_option("--ef", args->options.ef, "default HNSW candidate list of a search")
      ->capture_default_str()
      ->check(CLI::Range(1U, kMaxBreadth));
  std::vector<std::string> metric_names;
  for (const auto& entry : kAnnMetrics) metric_names.emplace_back(entry.first);
  sub->add_option("--metric", args->metric, "cosine or dot (larger is nearer), or l2 (Euclidean distance)")
      ->capture_default_str()
      ->check(CLI::IsMember(metric_names));
  sub->add_option("--threads", args->options.threads, "threads that build the index and apply batches of changes; 0: one per allowed CPU")
      ->capture_default_str()
      ->check(CLI::Range(0U, kMaxThreads));
  sub->add_option("--duration", args->duration_s, "stop after S seconds; 0: until SIGINT or SIGTERM")
      ->check(CLI::Range(0.0, kMaxDurationS));
  add_json_flag(*sub, args->json);
  bind_action(*sub, action, args, &run_ann);
  add_ann_search_command(app, action);
}

}  // namespace weir::tools

// Vector commands: vset, vget, vsearch.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "command.hpp"
#include "weir/core/vector_store.hpp"
#include "weir/tools/arena_access.hpp"
#include "weir/tools/arena_report.hpp"
#include "weir/tools/output.hpp"
#include "weir/tools/read_input.hpp"

namespace weir::tools {
namespace {

using core::VectorStatus;

constexpr std::size_t kDefaultTopK = 10;            // vsearch --k when not given
constexpr std::size_t kMaxTopK = 1U << 20;          // vsearch --k is refused past this

std::string count_message(std::string_view what, std::size_t got, std::uint32_t dim, const core::Arena& arena) {
  return fmt::format("{} has {} float{}, but {} holds vectors of exactly {} floats", what, got, got == 1 ? "" : "s",
                     arena.location().describe(), dim);
}

int report_vector_failure(VectorStatus status, const core::Arena& arena, std::string_view key, std::string_view verb) {
  const std::string where = arena.location().describe();
  const char* reason = core::vector_status_text(status);
  std::string message;
  switch (status) {
    case VectorStatus::not_found:
      message = fmt::format("key '{}' not found in {}", key, where);
      break;
    case VectorStatus::no_vector:
      message = fmt::format("key '{}' in {} has no vector", key, where);
      break;
    case VectorStatus::torn:
      message = fmt::format("the vector of key '{}' in {} is torn ({}); vset the key again to repair it", key, where,
                            reason);
      break;
    case VectorStatus::no_vectors:
      message = fmt::format("{} has no vectors: it was created with vector dimension 0", where);
      break;
    case VectorStatus::ok:
    case VectorStatus::busy:
    case VectorStatus::wrong_length:
    case VectorStatus::not_finite:
    case VectorStatus::full:
    case VectorStatus::key_too_long:
    case VectorStatus::key_empty:
    case VectorStatus::stale_handle:
    case VectorStatus::read_only:
    case VectorStatus::no_kernel:
      message = fmt::format("cannot {} the vector of key '{}' in {}: {} ({})", verb, key, where, reason,
                            core::vector_status_name(status));
      break;
  }
  print_error(message);
  return kExitError;
}

double norm_of(std::span<const float> v) {
  double sum = 0;
  for (const float x : v) sum += static_cast<double>(x) * static_cast<double>(x);
  return std::sqrt(sum);
}

// A float as JSON: its shortest round-trip text ("0.1", not 0.10000000149011612); null if not finite.
std::string float_json(float x) { return std::isfinite(x) ? fmt::format("{}", x) : std::string("null"); }

std::string floats_json(std::span<const float> v) {
  JsonArray array;
  for (const float x : v) array.raw(float_json(x));
  return array.str();
}

// ---- vset ----

struct VsetArgs {
  std::string where;
  std::string key;
  std::string file;
  bool json = false;
};

int run_vset(const VsetArgs& args) {
  auto text = read_file_or_stdin(args.file, fmt::format("'{}'", args.file == kStdinPath ? "stdin" : args.file));
  if (!text) return report_error("", text.error());
  const std::string what = args.file == kStdinPath ? std::string("stdin") : fmt::format("'{}'", args.file);
  auto values = parse_floats(*text, what);
  if (!values) return report_usage(values.error().what);

  auto arena = open_arena(args.where, Access::read_write);
  if (!arena) return kExitError;
  core::VectorStore vectors(*arena);
  if (vectors.dim() == 0) return report_vector_failure(VectorStatus::no_vectors, *arena, args.key, "set");
  if (values->size() != vectors.dim()) {
    print_error(count_message(fmt::format("the vector for key '{}' from {}", args.key, what), values->size(),
                              vectors.dim(), *arena));
    return kExitError;
  }
  if (const VectorStatus status = vectors.set_wait(args.key, *values); status != VectorStatus::ok)
    return report_vector_failure(status, *arena, args.key, "set");
  const double norm = norm_of(*values);
  if (args.json) {
    print_json(JsonObject{}.text("arena", args.where).text("key", args.key).number("dim", vectors.dim()).real("norm", norm));
  } else {
    fmt::print("set the vector of '{}' in {}: {} floats, norm {}\n", args.key, arena->location().describe(),
               vectors.dim(), format_real(norm));
  }
  return kExitOk;
}

void add_vset(CLI::App& app, Action& action) {
  auto args = std::make_shared<VsetArgs>();
  CLI::App* sub = app.add_subcommand(
      "vset", "Store a key's vector (creating the key if needed) from a text file of floats, or - for stdin");
  add_name_option(*sub, args->where);
  add_key_option(*sub, args->key);
  sub->add_option("FILE", args->file, "floats separated by whitespace or commas; - reads stdin")->required();
  add_json_flag(*sub, args->json);
  bind_action(*sub, action, args, &run_vset);
}

// ---- vget ----

struct VgetArgs {
  std::string where;
  std::string key;
  bool json = false;
};

int run_vget(const VgetArgs& args) {
  auto arena = open_arena(args.where, Access::prefer_write);
  if (!arena) return kExitError;
  const core::VectorStore vectors(*arena);
  std::vector<float> values(vectors.dim());
  if (const VectorStatus status = vectors.get(args.key, values); status != VectorStatus::ok)
    return report_vector_failure(status, *arena, args.key, "read");
  if (args.json) {
    print_json(JsonObject{}
                   .text("arena", args.where)
                   .text("key", args.key)
                   .number("dim", vectors.dim())
                   .real("norm", norm_of(values))
                   .raw("vector", floats_json(values)));
    return kExitOk;
  }
  std::string line;
  for (const float x : values) {
    if (!line.empty()) line += ' ';
    line += fmt::format("{}", x);  // shortest text that reads back to the same float
  }
  fmt::print("{}\n", line);
  return kExitOk;
}

void add_vget(CLI::App& app, Action& action) {
  auto args = std::make_shared<VgetArgs>();
  CLI::App* sub = app.add_subcommand("vget", "Print a key's vector as space-separated floats");
  add_name_option(*sub, args->where);
  add_key_option(*sub, args->key);
  add_json_flag(*sub, args->json);
  bind_action(*sub, action, args, &run_vget);
}

// ---- vsearch ----

struct VsearchArgs {
  std::string where;
  std::size_t k = kDefaultTopK;
  std::string metric = "cosine";
  std::string kernel = "best";
  std::string query = std::string(kStdinPath);
  bool json = false;
};

constexpr std::array<std::pair<std::string_view, core::Metric>, 3> kMetrics{{
    {"cosine", core::Metric::cosine},
    {"dot", core::Metric::dot},
    {"l2", core::Metric::l2},
}};
constexpr std::array<std::pair<std::string_view, core::Kernel>, 4> kKernels{{
    {"best", core::Kernel::best},
    {"portable", core::Kernel::portable},
    {"avx2", core::Kernel::avx2},
    {"avx512", core::Kernel::avx512},
}};

template <class T, std::size_t N>
T lookup(const std::array<std::pair<std::string_view, T>, N>& table, std::string_view name) {
  for (const auto& [text, value] : table)
    if (text == name) return value;
  return table[0].second;  // unreachable: CLI11 checked the name
}

template <class T, std::size_t N>
std::vector<std::string> names(const std::array<std::pair<std::string_view, T>, N>& table) {
  std::vector<std::string> out;
  for (const auto& entry : table) out.emplace_back(entry.first);
  return out;
}

struct NamedHit {
  std::string key;
  float score;
};

int run_vsearch(const VsearchArgs& args) {
  const core::Metric metric = lookup(kMetrics, args.metric);
  const core::Kernel kernel = lookup(kKernels, args.kernel);
  auto text = read_file_or_stdin(args.query, fmt::format("'{}'", args.query == kStdinPath ? "stdin" : args.query));
  if (!text) return report_error("", text.error());
  const std::string what = args.query == kStdinPath ? std::string("the query on stdin")
                                                    : fmt::format("the query in '{}'", args.query);
  auto query = parse_floats(*text, what);
  if (!query) return report_usage(query.error().what);

  auto arena = open_arena(args.where, Access::prefer_write);
  if (!arena) return kExitError;
  const core::VectorStore vectors(*arena);
  if (vectors.dim() == 0) return report_vector_failure(VectorStatus::no_vectors, *arena, "", "search");
  if (query->size() != vectors.dim()) {
    print_error(count_message(what, query->size(), vectors.dim(), *arena));
    return kExitError;
  }
  std::vector<core::VectorHit> hits(args.k);
  std::size_t count = 0;
  core::SearchStats stats;
  const VectorStatus status =
      vectors.search(*query, core::SearchOptions{.metric = metric, .kernel = kernel}, hits, count, &stats);
  if (status != VectorStatus::ok) {
    print_error(fmt::format("cannot search {}: {} ({})", arena->location().describe(), core::vector_status_text(status),
                            core::vector_status_name(status)));
    return kExitError;
  }
  std::vector<NamedHit> named;
  std::vector<char> key(vectors.key_bytes());
  for (std::size_t i = 0; i < count; ++i) {
    std::uint32_t length = 0;
    if (vectors.key_of(hits[i], key, length) != VectorStatus::ok) continue;  // deleted since the search
    named.push_back({std::string(key.data(), length), hits[i].score});
  }

  if (args.json) {
    JsonArray list;
    for (std::size_t i = 0; i < named.size(); ++i) {
      list.raw(JsonObject{}
                   .number("rank", i + 1)
                   .text("key", named[i].key)
                   .raw("score", float_json(named[i].score))
                   .str());
    }
    print_json(JsonObject{}
                   .text("arena", args.where)
                   .text("metric", core::metric_name(metric))
                   .number("k", args.k)
                   .number("count", named.size())
                   .number("rows_scored", stats.rows_scored)
                   .number("skipped_busy", stats.skipped_busy)
                   .number("skipped_torn", stats.skipped_torn)
                   .raw("hits", list.str()));
    return kExitOk;
  }
  if (named.empty()) {
    fmt::print("no vectors in {}\n", arena->location().describe());
    return kExitOk;
  }
  std::size_t key_width = std::string_view{"KEY"}.size();
  for (const NamedHit& hit : named) key_width = std::max(key_width, hit.key.size());
  const int width = static_cast<int>(key_width) + kColumnGap;
  constexpr int kRankWidth = 6;
  fmt::print("{:<{}}{:<{}}{}\n", "RANK", kRankWidth, "KEY", width, metric == core::Metric::l2 ? "DISTANCE" : "SCORE");
  for (std::size_t i = 0; i < named.size(); ++i)
    fmt::print("{:<{}}{:<{}}{}\n", i + 1, kRankWidth, named[i].key, width, named[i].score);
  if (stats.skipped_busy + stats.skipped_torn != 0) {
    fmt::print(stderr, "weir: skipped {} vector(s) being written and {} torn vector(s)\n", stats.skipped_busy,
               stats.skipped_torn);
  }
  return kExitOk;
}

void add_vsearch(CLI::App& app, Action& action) {
  auto args = std::make_shared<VsearchArgs>();
  CLI::App* sub = app.add_subcommand(
      "vsearch", "Print the k keys whose vectors are nearest a query (floats on stdin, or --query FILE), best first");
  add_name_option(*sub, args->where);
  sub->add_option("--k", args->k, "how many results")->capture_default_str()->check(CLI::Range(std::size_t{1}, kMaxTopK));
  sub->add_option("--metric", args->metric, "cosine or dot (larger is nearer), or l2 (Euclidean distance)")
      ->capture_default_str()
      ->check(CLI::IsMember(names(kMetrics)));
  sub->add_option("--kernel", args->kernel, "scoring code path: best, portable, avx2, avx512")
      ->capture_default_str()
      ->check(CLI::IsMember(names(kKernels)));
  sub->add_option("--query", args->query, "file of query floats; - (default) reads stdin");
  add_json_flag(*sub, args->json);
  bind_action(*sub, action, args, &run_vsearch);
}

}  // namespace

void add_vector_commands(CLI::App& app, Action& action) {
  add_vset(app, action);
  add_vget(app, action);
  add_vsearch(app, action);
}

}  // namespace weir::tools

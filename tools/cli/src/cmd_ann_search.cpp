// `weir vector search ARENA PART`: the nearest vectors of a partition, through its ann service, or
// by the exact search filtered to the partition's keys (--exact, or when no service runs).
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "command.hpp"
#include "time_units.hpp"
#include "weir/ann/client.hpp"
#include "weir/ann/exact.hpp"
#include "weir/core/clock.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/tools/arena_access.hpp"
#include "weir/tools/arena_report.hpp"
#include "weir/tools/output.hpp"
#include "weir/tools/read_input.hpp"
#include "weir/tools/value_codec.hpp"

namespace weir::tools {
namespace {

constexpr std::uint32_t kDefaultK = 10;
constexpr std::uint32_t kMaxK = 256;         // ann::kMaxHits
constexpr double kDefaultTimeoutS = 1.0;     // longest wait for the service's answer
constexpr double kMaxTimeoutS = 3600.0;

struct SearchArgs {
  std::string where;
  std::string part;
  std::string like;
  std::string vector_file;
  std::uint32_t k = kDefaultK;
  std::uint32_t ef = 0;
  double timeout_s = kDefaultTimeoutS;
  bool exact = false;
  bool json = false;
};

struct Named {
  std::string key;
  float score = 0;
  std::string value_text;  // the key's value when it is an array (a pulse's time, sequence, ...)
  std::string value_json;
};

core::Result<std::vector<float>> read_vector_file(const std::string& path) {
  auto text = read_file_or_stdin(path, fmt::format("'{}'", path));
  if (!text) return tl::make_unexpected(text.error());
  std::vector<float> out;
  const char* p = text->data();
  const char* end = p + text->size();
  while (p < end) {
    if (*p == ',' || *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
      ++p;
      continue;
    }
    float x = 0;
    const auto [next, ec] = std::from_chars(p, end, x);
    if (ec != std::errc{}) return core::fail(core::Errc::invalid_argument, fmt::format("'{}': number {} is not a float", path, out.size() + 1));
    out.push_back(x);
    p = next;
  }
  return out;
}

std::vector<Named> name_hits(const core::Arena& arena, std::span<const core::VectorHit> hits) {
  const core::VectorStore vectors(arena);
  const core::KvStore kv(arena);
  std::vector<char> key(vectors.key_bytes());
  std::vector<std::byte> value(kv.value_bytes());
  std::vector<Named> out;
  for (const core::VectorHit& hit : hits) {
    std::uint32_t length = 0;
    if (vectors.key_of(hit, key, length) != core::VectorStatus::ok) continue;  // deleted since
    Named n{std::string(key.data(), length), hit.score, {}, {}};
    core::ValueInfo info;
    if (kv.get(n.key, value, info) == core::KvStatus::ok && info.type == core::ValueType::array) {
      const std::span<const std::byte> bytes(value.data(), info.length);
      n.value_text = array_to_text(info.array, bytes);
      n.value_json = array_to_json(info.array, bytes);
    }
    out.push_back(std::move(n));
  }
  return out;
}

int run_search(const SearchArgs& args) {
  if (args.like.empty() == args.vector_file.empty()) return report_usage("give exactly one of --like KEY and --vector FILE");
  std::vector<float> query;
  if (!args.vector_file.empty()) {
    auto parsed = read_vector_file(args.vector_file);
    if (!parsed) return report_usage(parsed.error().what);
    query = std::move(*parsed);
  }
  auto arena = open_arena(args.where, Access::read_write);
  if (!arena) return kExitError;
  const core::VectorStore vectors(*arena);
  if (vectors.dim() == 0) return report_error("", core::Error{core::Errc::invalid_argument, arena->location().describe() + " has no vectors"});
  if (!query.empty() && query.size() != vectors.dim())
    return report_usage(fmt::format("'{}' holds {} floats, the vectors of {} have {}", args.vector_file, query.size(),
                                    arena->location().describe(), vectors.dim()));

  const std::int64_t start_ns = core::monotonic_ns();
  std::vector<core::VectorHit> hits(args.k);
  std::size_t count = 0;
  ann::AnswerInfo info;
  bool exact = args.exact;
  if (!exact) {
    auto client = ann::Client::open(*arena, args.part);
    if (!client) {
      fmt::print(stderr, "weir: {}; answering with the exact search instead\n", client.error().what);
      exact = true;
    } else {
      ann::QueryOptions options;
      options.k = args.k;
      options.ef = args.ef;
      options.timeout_ns = static_cast<std::int64_t>(args.timeout_s * 1e9);
      auto got = args.like.empty() ? client->search(query, options, hits, &info)
                                   : client->search_like(args.like, options, hits, &info);
      if (!got) return report_error("", got.error());
      count = *got;
    }
  }
  if (exact) {
    if (query.empty()) {
      query.resize(vectors.dim());
      if (const core::VectorStatus st = vectors.get(args.like, query); st != core::VectorStatus::ok)
        return report_error("", core::Error{core::Errc::not_found, fmt::format("the vector of key '{}' in {}: {}", args.like,
                                                                               arena->location().describe(),
                                                                               core::vector_status_text(st))});
    }
    auto found = ann::exact_search(*arena, args.part, query, args.k);
    if (!found) return report_error("", found.error());
    hits = std::move(*found);
    count = hits.size();
  }
  const double round_trip_ms = static_cast<double>(core::monotonic_ns() - start_ns) / kNsPerMs;
  const std::vector<Named> named = name_hits(*arena, std::span<const core::VectorHit>(hits.data(), count));

  if (args.json) {
    JsonArray list;
    for (std::size_t i = 0; i < named.size(); ++i) {
      JsonObject hit;
      hit.number("rank", i + 1).text("key", named[i].key).raw("score", fmt::format("{}", named[i].score));  // shortest round-trip text
      if (!named[i].value_json.empty()) hit.raw("value", named[i].value_json);
      list.raw(hit.str());
    }
    JsonObject out;
    out.text("arena", args.where).text("part", args.part).text("path", exact ? "exact" : "ann").number("k", args.k);
    out.number("count", named.size()).real("round_trip_ms", round_trip_ms);
    if (!exact) out.number("indexed", info.indexed).number("lag", info.lag).real("service_ms", static_cast<double>(info.service_ns) / kNsPerMs);
    print_json(out.raw("hits", list.str()));
    return kExitOk;
  }
  if (named.empty()) {
    fmt::print("no vectors of '{}' in {}\n", args.part, arena->location().describe());
    return kExitOk;
  }
  std::size_t width = 3;
  for (const Named& n : named) width = std::max(width, n.key.size());
  const int key_width = static_cast<int>(width) + kColumnGap;
  constexpr int kRankWidth = 6, kScoreWidth = 12;
  fmt::print("{:<{}}{:<{}}{:<{}}VALUE\n", "RANK", kRankWidth, "KEY", key_width, "SCORE", kScoreWidth);
  for (std::size_t i = 0; i < named.size(); ++i)
    fmt::print("{:<{}}{:<{}}{:<{}}{}\n", i + 1, kRankWidth, named[i].key, key_width, named[i].score, kScoreWidth,
               named[i].value_text);
  return kExitOk;
}

}  // namespace

void add_ann_search_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<SearchArgs>();
  CLI::App* group = app.add_subcommand("vector", "Vector partitions: search");
  group->require_subcommand(1);
  CLI::App* sub = group->add_subcommand(
      "search", "The k vectors of partition PART nearest a key's vector (--like) or a file's (--vector), best first, "
                "through the partition's `weir ann` service (or exactly, with --exact or when none runs)");
  add_name_option(*sub, args->where);
  sub->add_option("PART", args->part, "the partition: the label its keys carry")->required();
  sub->add_option("--like", args->like, "the query is this key's vector (the key is among the hits)");
  sub->add_option("--vector", args->vector_file, "the query: floats in a text file, - for stdin");
  sub->add_option("-k,--k", args->k, "how many hits")->capture_default_str()->check(CLI::Range(1U, kMaxK));
  sub->add_option("--ef", args->ef, "HNSW candidate list; 0: the service's default")->capture_default_str();
  sub->add_option("--timeout", args->timeout_s, "longest wait for the service's answer, seconds")
      ->capture_default_str()
      ->check(CLI::Range(0.001, kMaxTimeoutS));
  sub->add_flag("--exact", args->exact, "the exact search over every vector, kept to PART's keys");
  add_json_flag(*sub, args->json);
  bind_action(*sub, action, args, &run_search);
}

}  // namespace weir::tools

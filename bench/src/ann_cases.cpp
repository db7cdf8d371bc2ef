// The ann rows of `weir bench vectors`: a partition of clustered vectors, its `weir ann` service in a
// forked child, and a client in this process. Per scale: the client's round trip (write of the query
// to read of the answer) p50 and p99, recall@10 against the exact VectorStore::search of the same
// queries (also timed: the baseline), the initial build (= a restart's rebuild), and the rate at
// which the service indexes new vectors while it answers queries.
//
// Data: ClusteredData (ann/clustered_data.hpp): 64 class centres (random unit vectors), each vector
// its centre + a variation of amplitude 0.5 along 16 directions of its class + isotropic Gaussian
// noise of amplitude 0.15, normalised; queries are fresh draws of the same mixture, not in the index.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "ann_cases.hpp"
#include "child_process.hpp"
#include "suite_report.hpp"
#include "weir/ann/client.hpp"
#include "weir/ann/clustered_data.hpp"
#include "weir/ann/service.hpp"
#include "weir/core/clock.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/signals.hpp"
#include "weir/json/json.hpp"

namespace weir::bench {

namespace {

struct Scale {
  const char* name;
  std::uint32_t vectors;
  std::uint32_t dim;
  std::uint32_t queries_per_rep;  // timed round trips per repetition
  std::uint32_t exact_queries;    // queries checked (and timed) against the exact search
  std::uint32_t inserts;          // new vectors written while serving, over all repetitions
};

constexpr Scale k100k{"ann.100k_768", 100'000, 768, 500, 200, 10'000};
constexpr Scale kQuick{"ann.10k_768", 10'000, 768, 100, 30, 1'000};
constexpr Scale k1M{"ann.1m_128", 1'000'000, 128, 500, 50, 10'000};

constexpr std::string_view kPart = "bench";
constexpr std::uint32_t kK = 10;
constexpr std::uint32_t kKeyBytes = 48;
constexpr std::uint32_t kValueBytes = 256;          // holds an answer of 10 hits (168 bytes)
constexpr std::uint32_t kLogEntries = 1U << 16;     // change log per group: a burst of inserts is followed, not rescanned
constexpr std::uint32_t kMaxNameTries = 8;          // names tried per vector whose probe window is full
constexpr std::uint32_t kWarmup = 50;               // untimed round trips first
constexpr std::uint64_t kSeed = 0x616e'6e62'656e'6368;
constexpr double kP50TargetMs = 0.46;               // the targets
constexpr double kP99TargetMs = 1.0;
constexpr double kRecallTarget = 0.95;
constexpr std::int64_t kServeTimeoutNs = 600'000'000'000;  // longest wait for the child's build
constexpr std::int64_t kCatchUpTimeoutNs = 60'000'000'000;  // longest wait for the service to index a batch
constexpr std::int64_t kStopTimeoutNs = 10'000'000'000;
constexpr double kNsPerMs = 1e6;
constexpr std::string_view kUnitMs = "ms";
constexpr std::string_view kUnitVectorsPerS = "vectors/s";

std::atomic<bool> g_child_stop{false};
extern "C" void on_child_term(int) { g_child_stop.store(true, std::memory_order_relaxed); }

std::uint32_t slots_for(std::uint32_t n) {
  std::uint32_t slots = 1024;
  while (slots < 2 * n) slots *= 2;  // at most half full: the 64-entry probe window never fills
  return slots;
}

// Writes vector i under "v/<i>" (another name when its probe window is full), labelled kPart.
bool put(core::KvStore& kv, core::VectorStore& vectors, std::uint64_t mask, std::uint64_t ids, std::uint32_t i,
         std::span<const float> v) {
  for (std::uint32_t t = 0; t < kMaxNameTries; ++t) {
    const std::string key = "v/" + std::to_string(i) + (t == 0 ? "" : "." + std::to_string(t));
    core::KeyHandle h;
    const core::KvStatus made = kv.resolve(key, h, true);
    if (made == core::KvStatus::full) continue;
    if (made != core::KvStatus::ok || kv.set_labels(key, mask, ids) != core::KvStatus::ok) return false;
    if (vectors.set(h, v, core::kDefaultWaitNs) != core::VectorStatus::ok) return false;
    const std::int64_t stamp = core::monotonic_ns();  // the value write pulses the partition's group
    return kv.set(h, std::as_bytes(std::span(&stamp, 1)), core::ValueType::i64) == core::KvStatus::ok;
  }
  return false;
}

double percentile_ms(std::vector<std::int64_t> ns, double q) {
  std::sort(ns.begin(), ns.end());
  return static_cast<double>(percentile(ns, q)) / kNsPerMs;
}

struct Writer {
  core::KvStore kv;
  core::VectorStore vectors;
  std::uint64_t mask;
  std::uint64_t ids;
};

void run_scale(const Config& config, const Scale& sc, Results& results, Fields& fields) {
  const std::string name = std::string("bench.ann.") + std::to_string(::getpid());
  core::ArenaOptions options;
  options.slot_count = slots_for(sc.vectors + sc.inserts);
  options.key_bytes = kKeyBytes;
  options.value_bytes = kValueBytes;
  options.vector_dim = sc.dim;
  options.channel_data_bytes = 0;
  options.group_log_entries = kLogEntries;
  const std::string row = sc.name;
  const bool ran = run_in_arena(name, options, [&](core::Arena& arena) {
    core::GroupTable groups(arena);
    auto id = groups.label_id(kPart);
    if (!id) return results.note_error(row + ".setup", id.error().what);
    Writer w{core::KvStore(arena), core::VectorStore(arena), core::label_mask(kPart), std::uint64_t{1} << *id};
    ann::ClusteredData gen(sc.dim, ann::ClusterShape{}, kSeed);
    std::vector<float> v(sc.dim);
    const std::int64_t fill_start = core::monotonic_ns();
    for (std::uint32_t i = 0; i < sc.vectors; ++i) {
      gen.next(v);
      if (!put(w.kv, w.vectors, w.mask, w.ids, i, v)) return results.note_error(row + ".setup", "writing vector " + std::to_string(i));
    }
    const double fill_s = static_cast<double>(core::monotonic_ns() - fill_start) / 1e9;

    // The service, in a child of its own.
    int fds[2];
    if (::pipe(fds) != 0) return results.note_error(row + ".setup", "pipe");
    const pid_t pid = ::fork();
    if (pid < 0) return results.note_error(row + ".setup", "fork");
    if (pid == 0) {
      ::close(fds[0]);
      struct sigaction sa {};
      sa.sa_handler = on_child_term;
      ::sigaction(SIGTERM, &sa, nullptr);
      ann::ServiceOptions so;
      auto served = ann::run_service(arena, kPart, so, g_child_stop, [&](const ann::ServiceReport& r) {
        (void)!::write(fds[1], &r.build_ns, sizeof r.build_ns);
      });
      if (!served) std::fprintf(stderr, "weir bench: ann service: %s\n", served.error().what.c_str());
      ::_exit(served ? 0 : 1);
    }
    ::close(fds[1]);
    ChildProcess child(pid, fds[0]);
    std::int64_t build_ns = 0;
    if (!child.read_exact(&build_ns, sizeof build_ns, kServeTimeoutNs))
      return results.note_error(row + ".setup", "the ann service did not start serving");
    results.add_row(make_row(row + ".build", kUnitMs, {static_cast<double>(build_ns) / kNsPerMs}));
    fields.add(row + ".build", "vectors_per_s", sc.vectors / (static_cast<double>(build_ns) / 1e9), 0);
    fields.add(row + ".build", "fill_s", fill_s, 2);

    auto client = ann::Client::open(arena, kPart);
    if (!client) return results.note_error(row + ".setup", client.error().what);
    std::vector<std::vector<float>> queries(sc.queries_per_rep, std::vector<float>(sc.dim));
    for (auto& q : queries) gen.next(q);
    std::vector<core::VectorHit> hits(kK);
    ann::AnswerInfo info;
    std::uint64_t failed = 0, calls = 0;
    std::string what = "none";
    const auto ask = [&](std::span<const float> q) -> std::int64_t {
      const std::int64_t t0 = core::monotonic_ns();
      auto got = client->search(q, ann::QueryOptions{}, hits, &info);
      const std::int64_t t1 = core::monotonic_ns();
      ++calls;
      if (!got || *got != kK) {
        ++failed;
        what = got ? "short answer" : got.error().what;
      }
      return t1 - t0;
    };
    for (std::uint32_t i = 0; i < kWarmup; ++i) (void)ask(queries[i % queries.size()]);

    // Recall against the exact search of the same queries, which is also the baseline's timing.
    std::size_t found = 0;
    std::vector<double> exact_ms;
    std::vector<double> service_ms;
    std::vector<core::VectorHit> truth(kK);
    for (std::uint32_t i = 0; i < sc.exact_queries; ++i) {
      const auto& q = queries[i % queries.size()];
      (void)ask(q);
      service_ms.push_back(static_cast<double>(info.service_ns) / kNsPerMs);
      std::size_t count = 0;
      const std::int64_t t0 = core::monotonic_ns();
      if (w.vectors.search(q, core::SearchOptions{}, truth, count) != core::VectorStatus::ok) ++failed;
      exact_ms.push_back(static_cast<double>(core::monotonic_ns() - t0) / kNsPerMs);
      for (std::size_t a = 0; a < kK; ++a)
        for (std::size_t b = 0; b < count; ++b) found += hits[a].slot == truth[b].slot ? 1U : 0U;
    }
    const double recall = static_cast<double>(found) / (static_cast<double>(sc.exact_queries) * kK);

    // Round trips: p50 and p99 of each repetition; the rows are their medians over repetitions.
    std::vector<double> p50, p99;
    for (int r = 0; r < config.reps; ++r) {
      std::vector<std::int64_t> ns;
      for (const auto& q : queries) ns.push_back(ask(q));
      p50.push_back(percentile_ms(ns, 0.5));
      p99.push_back(percentile_ms(ns, 0.99));
    }
    results.add_row(make_row(row + ".exact", kUnitMsPerQuery, exact_ms));
    for (const auto& [suffix, values, target] :
         {std::tuple{".p50", p50, kP50TargetMs}, std::tuple{".p99", p99, kP99TargetMs}}) {
      Row line = make_row(row + suffix, kUnitMsPerQuery, values);
      line.baseline = row + ".exact";
      if (const Row* exact = results.find(row + ".exact"); exact != nullptr && exact->stats.median_ns > 0)
        line.ratio = line.stats.median_ns / exact->stats.median_ns;
      if (!config.quick) {
        line.target = "<=" + json::format_real(target) + "ms";
        line.pass = line.stats.median_ns <= target;
      }
      results.add_row(std::move(line));
      fields.add(row + suffix, "recall_at_10", recall, 4);
      fields.add_bool(row + suffix, "recall_pass", recall >= kRecallTarget);
      fields.add(row + suffix, "ef", std::uint64_t{ann::ServiceOptions{}.ef});
      fields.add(row + suffix, "m", std::uint64_t{ann::ServiceOptions{}.m});
    }
    std::sort(service_ms.begin(), service_ms.end());
    if (!service_ms.empty()) fields.add(row + ".p50", "service_ms", service_ms[service_ms.size() / 2], 4);

    // New vectors while serving: a writer thread puts each repetition's batch as fast as it can,
    // this thread keeps asking; the rate is the batch over the time until the service indexed it all.
    std::vector<double> rates, busy_p50, busy_p99;
    const std::uint32_t batch = sc.inserts / static_cast<std::uint32_t>(config.reps);
    std::uint32_t next = sc.vectors;
    ann::ClusteredData more(sc.dim, ann::ClusterShape{}, kSeed + 1);
    for (int r = 0; r < config.reps && batch > 0; ++r) {
      std::vector<std::vector<float>> fresh(batch, std::vector<float>(sc.dim));
      for (auto& f : fresh) more.next(f);
      (void)ask(queries[0]);
      const std::uint64_t target = info.indexed + batch;
      std::atomic<bool> write_ok{true};
      const std::int64_t t0 = core::monotonic_ns();
      std::thread writer([&, first = next] {
        Writer tw{core::KvStore(arena), core::VectorStore(arena), w.mask, w.ids};
        for (std::uint32_t i = 0; i < batch; ++i)
          if (!put(tw.kv, tw.vectors, tw.mask, tw.ids, first + i, fresh[i])) write_ok.store(false);
      });
      std::vector<std::int64_t> ns;
      std::int64_t done_ns = 0;
      for (std::size_t i = 0; core::monotonic_ns() - t0 < kCatchUpTimeoutNs; ++i) {
        ns.push_back(ask(queries[i % queries.size()]));
        if (info.indexed >= target) {
          done_ns = core::monotonic_ns();
          break;
        }
      }
      writer.join();
      next += batch;
      if (!write_ok.load() || done_ns == 0) {
        ++failed;
        what = "the service did not index a batch of new vectors in time";
        break;
      }
      rates.push_back(batch / (static_cast<double>(done_ns - t0) / 1e9));
      busy_p50.push_back(percentile_ms(ns, 0.5));
      busy_p99.push_back(percentile_ms(ns, 0.99));
    }
    if (!rates.empty()) {
      results.add_row(make_row(row + ".insert", kUnitVectorsPerS, rates));
      fields.add(row + ".insert", "batch", std::uint64_t{batch});
      results.add_row(make_row(row + ".p50_inserting", kUnitMsPerQuery, busy_p50));
      results.add_row(make_row(row + ".p99_inserting", kUnitMsPerQuery, busy_p99));
    }
    if (failed != 0) results.note_failures(row, failed, calls, what);
    client = tl::make_unexpected(core::Error{core::Errc::not_found, "closed"});  // releases its keys and watcher
    ::kill(pid, SIGTERM);
    int status = 0;
    if (!child.wait_exit(kStopTimeoutNs, status) || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
      results.note_error(row + ".stop", exit_text(status, "ann service child"));
  });
  if (!ran) results.note_error(row + ".setup", "cannot create arena " + name);
}

}  // namespace

std::vector<std::string> take_ann_options(const std::vector<std::string>& args, AnnOptions& out) {
  std::vector<std::string> rest;
  for (const std::string& a : args) {
    if (a == "--ann-1m") {
      out.large = true;
    } else if (a == "--ann-only") {
      out.only = true;
    } else {
      rest.push_back(a);
    }
  }
  return rest;
}

void run_ann_cases(const Config& config, const AnnOptions& options, Results& results, Fields& fields) {
  run_scale(config, config.quick ? kQuick : k100k, results, fields);
  if (options.large && !config.quick) run_scale(config, k1M, results, fields);
}

}  // namespace weir::bench

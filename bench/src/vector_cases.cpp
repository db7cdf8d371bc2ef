// `weir bench vectors`: top-10 search over 100k x 768 float vectors on one thread, against a plain
// dot-product loop over the same rows and a plain read of the same bytes, in the same run.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ann_cases.hpp"
#include "embed_cases.hpp"
#include "extra_suites.hpp"
#include "harness.hpp"
#include "suite_report.hpp"
#include "vector_sgemm.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/vector_store.hpp"

namespace weir::bench {

namespace {

constexpr std::uint32_t kDim = 768;                     // float32 per vector
constexpr std::uint32_t kVectors = 100'000;             // vectors searched
constexpr std::uint32_t kQuickVectors = 10'000;         // ... with --quick
constexpr std::uint32_t kSlots = 131'072;               // arena slots, hence vector rows: 76% full
constexpr std::uint32_t kQuickSlots = 16'384;           // ... with --quick: 61% full
constexpr std::uint32_t kKeyBytes = 32;                 // key_bytes of the arena ("vec.000000" fits)
constexpr std::uint32_t kValueBytes = 64;               // value_bytes of the arena (values are unused)
constexpr std::uint32_t kMaxNameTries = 4;              // names tried per vector wanted, for probe windows that are full
constexpr std::size_t kTopK = 10;                       // hits per search
constexpr std::uint32_t kQueryCount = 16;               // distinct random queries, cycled over
constexpr std::uint64_t kSeed = 0x7765'6972'7665'6373;  // fixed: every run searches the same data
constexpr std::uint32_t kMaxQueriesPerRep = 1000;       // guards the calibration against a broken clock
constexpr std::uint32_t kRowPresent = 1U << 0;          // VectorRowHeader::flags bit: the row holds a vector
constexpr std::size_t kLanes = 8;                       // independent accumulators of the plain dot product
constexpr double kSearchOverStream = 1.25;              // target: a search takes at most this times one read of its bytes
constexpr std::uint32_t kBatch = 16;                    // queries per batched search (search_batch)
constexpr double kBatchOverSingle = 0.1;                // target: a batched query takes at most this of a batch-of-one query
constexpr double kBatchOverSgemm = 1.2;                 // target: a batched query takes at most this times its share of the sgemm
constexpr float kScoreTolerance = 1e-3F;                // relative: kernels sum in different orders
constexpr double kNsPerMs = 1e6;
constexpr double kBytesPerGB = 1e9;
constexpr int kRateDecimals = 2;
constexpr int kRatioDecimals = 3;

constexpr const char* kUsage =
    "usage: weir bench vectors [--json] [--reps N] [--quick]\n"
    "  top-10 search over 100k x 768 vectors, one thread, against a plain dot-product loop and a\n"
    "  plain read of the same bytes; batched searches of 1 and 16 queries per pass, against an\n"
    "  OpenBLAS sgemm of the 16 queries and a contiguous copy of the vectors\n"
    "  --json     one JSON object per result line on stdout\n"
    "  --reps N   repetitions per case, 1..1000 (default 5); the median is reported\n"
    "  --quick    10k vectors and a tenth of the time per repetition (for tests)\n"
    "  --ann-1m   also the ann rows over 1M x 128 vectors (their index takes minutes to build)\n"
    "  --ann-only the ann rows alone\n";

constexpr std::string_view kStreamName = "base.mem.stream";
constexpr std::string_view kDotLoopName = "base.vec.dot_loop";
constexpr std::string_view kBatch1Name = "vec.batch1.top10.cosine";
constexpr std::string_view kBatch16Name = "vec.batch16.top10.cosine";
constexpr std::string_view kSgemmName = "base.vec.sgemm16";                        // the batch's floor
constexpr std::string_view kBatch16SgemmName = "vec.batch16.top10.cosine.vs_sgemm";  // batch16's line against it

struct MetricCase {
  const char* name;
  core::Metric metric;
};
constexpr MetricCase kMetricCases[] = {
    {"vec.search.top10.cosine", core::Metric::cosine},
    {"vec.search.top10.dot", core::Metric::dot},
    {"vec.search.top10.l2", core::Metric::l2},
};

// Every ratio and target of the report, in one place.
constexpr Comparison kComparisons[] = {
    {"vec.search.top10.cosine", kStreamName, Goal::ratio_at_most, kSearchOverStream},
    {"vec.search.top10.dot", kStreamName, Goal::ratio_at_most, kSearchOverStream},
    {"vec.search.top10.l2", kStreamName, Goal::ratio_at_most, kSearchOverStream},
    {kDotLoopName, kStreamName, Goal::none, 0.0},
    {kBatch1Name, "vec.search.top10.cosine", Goal::none, 0.0},
    {kBatch16Name, kBatch1Name, Goal::ratio_at_most, kBatchOverSingle},
    {kBatch16SgemmName, kSgemmName, Goal::ratio_at_most, kBatchOverSgemm},
};

class Random {  // splitmix64: fixed, fast, and the same everywhere
 public:
  explicit Random(std::uint64_t seed) noexcept : state_(seed) {}
  std::uint64_t next() noexcept {
    std::uint64_t z = (state_ += 0x9e37'79b9'7f4a'7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58'476d'1ce4'e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d0'49bb'1331'11ebULL;
    return z ^ (z >> 31);
  }
  float uniform() noexcept {  // in [-1, 1)
    return static_cast<float>(static_cast<double>(next() >> 40) / static_cast<double>(1ULL << 23)) - 1.0F;
  }
  void fill(std::span<float> v) noexcept {
    for (float& x : v) x = uniform();
  }

 private:
  std::uint64_t state_;
};

// Where the rows are and which hold a vector, read once from the layout (arena_layout.hpp).
struct RowMap {
  const std::byte* base = nullptr;
  std::uint64_t stride = 0;
  std::vector<std::uint8_t> present;       // per row: 1 when it holds a vector
  std::vector<std::uint32_t> present_rows;  // the rows that do, ascending
  std::uint64_t pass_bytes = 0;            // bytes a search reads: every header line, present rows whole
};

RowMap map_rows(const core::Arena& arena, std::uint32_t rows) {
  RowMap m;
  m.base = arena.region(core::Region::vectors);
  m.stride = core::vector_row_stride(kDim);
  m.present.resize(rows);
  for (std::uint32_t i = 0; i < rows; ++i) {
    const auto& header = *reinterpret_cast<const core::VectorRowHeader*>(m.base + i * m.stride);
    const bool present = (header.flags.load(std::memory_order_relaxed) & kRowPresent) != 0;  // quiescent: no writer
    m.present[i] = present ? 1 : 0;
    if (present) m.present_rows.push_back(i);
    m.pass_bytes += present ? m.stride : core::kCacheLine;
  }
  return m;
}

// The floor: one read of every byte a search reads (each row's header line; the whole row where it
// holds a vector), as a plain sum of 64-bit words in the widest vectors the search's kernel uses, so
// it issues as few loads per line as the search does. GCC's vector extension: no intrinsics, and
// each variant keeps its accumulators in registers at any optimisation level.
template <class Step>
[[gnu::always_inline]] inline void for_each_line(const RowMap& m, Step&& step) noexcept {
  const std::size_t rows = m.present.size();
  for (std::size_t i = 0; i < rows; ++i) {
    const std::byte* row = m.base + i * m.stride;
    const std::byte* end = row + (m.present[i] != 0 ? m.stride : core::kCacheLine);
    for (const std::byte* p = row; p < end; p += core::kCacheLine) step(p);
  }
}

// Adds the words at p to acc (by reference: a wider vector passed by value would change the ABI).
template <class Words>
[[gnu::always_inline]] inline void add_words(Words& acc, const std::byte* p) noexcept {
  Words w;
  std::memcpy(&w, p, sizeof w);
  acc += w;
}

using Words2 = std::uint64_t __attribute__((vector_size(16)));  // SSE2 or NEON: any 64-bit target

std::uint64_t stream_pass_128(const RowMap& m) noexcept {
  Words2 a0 = {}, a1 = {}, a2 = {}, a3 = {};  // one line per step (an array would live in memory at -O2)
  for_each_line(m, [&](const std::byte* p) {
    add_words(a0, p);
    add_words(a1, p + 16);
    add_words(a2, p + 32);
    add_words(a3, p + 48);
  });
  const Words2 total = (a0 + a1) + (a2 + a3);
  return total[0] + total[1];
}

#if defined(__x86_64__)
using Words4 = std::uint64_t __attribute__((vector_size(32)));
using Words8 = std::uint64_t __attribute__((vector_size(64)));

__attribute__((target("avx2"))) std::uint64_t stream_pass_256(const RowMap& m) noexcept {
  Words4 a0 = {}, a1 = {};
  for_each_line(m, [&](const std::byte* p) {
    add_words(a0, p);
    add_words(a1, p + 32);
  });
  const Words4 total = a0 + a1;
  return (total[0] + total[1]) + (total[2] + total[3]);
}

__attribute__((target("avx512f"))) std::uint64_t stream_pass_512(const RowMap& m) noexcept {
  Words8 acc = {};
  for_each_line(m, [&](const std::byte* p) { add_words(acc, p); });
  std::uint64_t sum = 0;
  for (std::size_t j = 0; j < sizeof(Words8) / sizeof(std::uint64_t); ++j) sum += acc[j];
  return sum;
}
#endif

// Vector bits of the stream that matches the search's kernel.
unsigned stream_bits(core::Kernel kernel) noexcept {
#if defined(__x86_64__)
  switch (kernel) {
    case core::Kernel::avx512: return 512;
    case core::Kernel::avx2: return 256;
    case core::Kernel::best:
    case core::Kernel::portable: break;
  }
#else
  (void)kernel;
#endif
  return 128;
}

std::uint64_t stream_pass(const RowMap& m, unsigned bits) noexcept {
#if defined(__x86_64__)
  if (bits == 512) return stream_pass_512(m);
  if (bits == 256) return stream_pass_256(m);
#endif
  return stream_pass_128(m);
}

// A straightforward dot product: independent accumulators, so the compiler may vectorise it
// without reassociating, and nothing else (no target-specific code).
float dot_plain(const float* q, const float* v, std::uint32_t n) noexcept {
  float acc[kLanes] = {};
  std::uint32_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (std::size_t j = 0; j < kLanes; ++j) acc[j] += q[i + j] * v[i + j];
  for (std::size_t j = 0; i < n; ++i, ++j) acc[j] += q[i] * v[i];
  float sum = 0.0F;
  for (const float a : acc) sum += a;
  return sum;
}

struct Hit {
  float score = 0.0F;
  std::uint32_t row = 0;
};

// The baseline search: dot product of every present row, top k kept best first by insertion.
std::size_t dot_loop_top(const RowMap& m, const float* query, std::array<Hit, kTopK>& top) noexcept {
  std::size_t n = 0;
  for (const std::uint32_t r : m.present_rows) {
    const auto* v = reinterpret_cast<const float*>(m.base + r * m.stride + sizeof(core::VectorRowHeader));
    const float score = dot_plain(query, v, kDim);
    if (n == kTopK && !(score > top[kTopK - 1].score)) continue;
    std::size_t at = n < kTopK ? n++ : kTopK - 1;
    for (; at > 0 && top[at - 1].score < score; --at) top[at] = top[at - 1];
    top[at] = Hit{score, r};
  }
  return n;
}

bool close_enough(float a, float b) noexcept {
  return std::fabs(a - b) <= kScoreTolerance * std::max(1.0F, std::fabs(b));
}

// Inserts `wanted` keys with random vectors; a name whose probe window is full is skipped for the next.
bool fill_vectors(core::VectorStore& store, std::uint32_t wanted, Random& random, Results& results) {
  std::vector<float> v(kDim);
  std::uint32_t stored = 0;
  std::uint32_t full = 0;
  char key[32];
  for (std::uint32_t i = 0; stored < wanted && i < wanted * kMaxNameTries; ++i) {
    std::snprintf(key, sizeof key, "vec.%06u", i);
    random.fill(v);
    const core::VectorStatus status = store.set(key, v);
    if (status == core::VectorStatus::full) {
      ++full;
      continue;
    }
    if (status != core::VectorStatus::ok) {
      results.note_error("setup.vectors", std::string("set ") + key + ": " + core::vector_status_name(status));
      return false;
    }
    ++stored;
  }
  if (full != 0)
    std::fprintf(stderr, "weir bench: vectors: %u keys found their probe window full and were skipped\n", full);
  if (stored < wanted) {
    results.note_error("setup.vectors", "stored " + std::to_string(stored) + " of " + std::to_string(wanted) + " vectors");
    return false;
  }
  return true;
}

struct TimedCase {
  TimedCase(std::string case_name, std::string_view case_unit, std::function<bool(std::uint32_t)> case_op)
      : name(std::move(case_name)), unit(case_unit), op(std::move(case_op)) {}

  std::string name;
  std::string_view unit;
  std::function<bool(std::uint32_t)> op;  // one query (or pass); false: it failed
  std::string what = "none";              // the last failure
  std::uint64_t calls = 0;
  std::uint64_t failures = 0;
  std::uint32_t per_rep = 1;
  std::uint32_t queries_per_call = 1;  // a batched search answers several: the line is per query
  std::vector<double> per_op_ms;
};

std::int64_t time_call(TimedCase& c, std::uint32_t query) {
  const std::int64_t start_ns = core::monotonic_ns();
  c.failures += c.op(query % kQueryCount) ? 0U : 1U;
  ++c.calls;
  return core::monotonic_ns() - start_ns;
}

// Each case: one untimed call (warm-up) and one timed call to size a repetition at config.rep_ns().
// Then every repetition takes the cases' calls in turn (one of each, again and again), so a change
// of load on the machine reaches every case alike; a call takes milliseconds, so timing each alone
// costs nothing measurable.
void time_cases(const Config& config, std::vector<TimedCase>& cases) {
  std::uint32_t query = 0;
  std::uint32_t most = 1;
  for (TimedCase& c : cases) {
    (void)time_call(c, query++);
    const double probe_ns = static_cast<double>(std::max<std::int64_t>(time_call(c, query++), 1));
    const double per_rep = static_cast<double>(config.rep_ns()) / probe_ns;
    c.per_rep = static_cast<std::uint32_t>(std::clamp(per_rep, 1.0, static_cast<double>(kMaxQueriesPerRep)));
    most = std::max(most, c.per_rep);
  }
  for (int r = 0; r < config.reps; ++r) {
    std::vector<std::int64_t> elapsed_ns(cases.size(), 0);
    for (std::uint32_t k = 0; k < most; ++k, ++query)
      for (std::size_t i = 0; i < cases.size(); ++i)
        if (k < cases[i].per_rep) elapsed_ns[i] += time_call(cases[i], query);
    for (std::size_t i = 0; i < cases.size(); ++i)
      cases[i].per_op_ms.push_back(static_cast<double>(elapsed_ns[i]) / kNsPerMs / cases[i].per_rep /
                                   cases[i].queries_per_call);
  }
}

void run_cases(const Config& config, const core::Arena& arena, std::uint32_t vectors, Results& results,
               Fields& fields, core::Kernel& kernel_used) {
  core::VectorStore store(arena);
  Random random(kSeed);
  if (!fill_vectors(store, vectors, random, results)) return;
  const RowMap rows = map_rows(arena, store.rows());
  if (rows.present_rows.size() != vectors)
    return results.note_error("setup.vectors", "rows holding a vector: " + std::to_string(rows.present_rows.size()));

  std::vector<std::vector<float>> queries(kQueryCount, std::vector<float>(kDim));
  for (auto& q : queries) random.fill(q);
  kernel_used = core::best_kernel();
  const unsigned bits = stream_bits(kernel_used);

  // The search and the plain loop must agree before either is timed.
  std::array<Hit, kTopK> base_top{};
  std::array<core::VectorHit, kTopK> hits{};
  std::size_t count = 0;
  core::SearchOptions dot_options;
  dot_options.metric = core::Metric::dot;
  const core::VectorStatus checked = store.search(queries[0], dot_options, hits, count);
  if (checked != core::VectorStatus::ok || count != kTopK || dot_loop_top(rows, queries[0].data(), base_top) != kTopK)
    return results.note_error("setup.check", std::string("search: ") + core::vector_status_name(checked));
  for (std::size_t i = 0; i < kTopK; ++i)
    if (!close_enough(hits[i].score, base_top[i].score))
      return results.note_error("setup.check", "search and the plain loop disagree at hit " + std::to_string(i));

  // A batched search must answer each query exactly as the search of it alone.
  std::vector<float> batch;
  for (std::uint32_t q = 0; q < kBatch; ++q) batch.insert(batch.end(), queries[q % kQueryCount].begin(), queries[q % kQueryCount].end());
  {
    std::vector<core::VectorHit> batch_hits(std::size_t{kBatch} * kTopK);
    std::array<std::size_t, kBatch> counts{};
    core::SearchOptions cosine;
    const core::VectorStatus status = store.search_batch(batch, cosine, batch_hits, counts);
    if (status != core::VectorStatus::ok)
      return results.note_error("setup.check", std::string("search_batch: ") + core::vector_status_name(status));
    for (std::uint32_t q = 0; q < kBatch; ++q) {
      if (store.search(queries[q % kQueryCount], cosine, hits, count) != core::VectorStatus::ok || count != counts[q])
        return results.note_error("setup.check", "search_batch and search disagree on query " + std::to_string(q));
      for (std::size_t i = 0; i < count; ++i)
        if (hits[i].slot != batch_hits[q * kTopK + i].slot || hits[i].score != batch_hits[q * kTopK + i].score)
          return results.note_error("setup.check", "search_batch and search disagree on query " + std::to_string(q));
    }
  }

  // The sgemm floor scores the same batch against a contiguous copy of the same vectors.
  std::vector<const float*> vector_data;
  for (const std::uint32_t r : rows.present_rows)
    vector_data.push_back(reinterpret_cast<const float*>(rows.base + r * rows.stride + sizeof(core::VectorRowHeader)));
  SgemmFloor sgemm(vector_data, kDim, batch);
  (void)sgemm.run();
  for (const std::uint32_t q : {0U, kBatch - 1}) {
    for (const std::size_t r : {std::size_t{0}, vector_data.size() - 1}) {
      float dot = 0.0F;
      for (std::uint32_t i = 0; i < kDim; ++i) dot += batch[std::size_t{q} * kDim + i] * vector_data[r][i];
      if (!close_enough(sgemm.score(q, static_cast<std::uint32_t>(r)), dot))
        return results.note_error("setup.check", "sgemm and the plain loop disagree on query " + std::to_string(q));
    }
  }

  std::vector<TimedCase> cases;
  cases.reserve(5 + std::size(kMetricCases));  // the search ops hold a reference to their own case
  std::uint64_t sink = 0;
  cases.emplace_back(std::string(kStreamName), kUnitMsPerPass, [&](std::uint32_t) {
                     sink += stream_pass(rows, bits);
                     return true;
                   });
  cases.emplace_back(std::string(kDotLoopName), kUnitMsPerQuery, [&](std::uint32_t q) {
                     std::array<Hit, kTopK> top{};
                     const bool ok = dot_loop_top(rows, queries[q].data(), top) == kTopK;
                     keep(top);
                     return ok;
                   });
  for (const MetricCase& mc : kMetricCases) {
    cases.emplace_back(mc.name, kUnitMsPerQuery, nullptr);
    TimedCase& c = cases.back();
    c.op = [&store, &queries, &rows, &c, metric = mc.metric](std::uint32_t q) {
      core::SearchOptions options;
      options.metric = metric;
      std::array<core::VectorHit, kTopK> out{};
      std::size_t n = 0;
      core::SearchStats stats;
      const core::VectorStatus status = store.search(queries[q], options, out, n, &stats);
      keep(out);
      if (status != core::VectorStatus::ok) {
        c.what = core::vector_status_name(status);
        return false;
      }
      if (n != kTopK || stats.rows_scored != rows.present_rows.size()) {
        c.what = "fewer hits or rows scored than vectors stored";
        return false;
      }
      return true;
    };
  }
  for (const std::uint32_t n : {1U, kBatch}) {
    cases.emplace_back(std::string(n == 1 ? kBatch1Name : kBatch16Name), kUnitMsPerQuery, nullptr);
    TimedCase& c = cases.back();
    c.queries_per_call = n;
    c.op = [&store, &batch, &rows, &c, n](std::uint32_t q) {
      // Batches of one start at different queries, as the single searches do.
      const std::span<const float> these =
          n == 1 ? std::span<const float>(batch).subspan(std::size_t{q % kBatch} * kDim, kDim) : std::span<const float>(batch);
      std::array<core::VectorHit, std::size_t{kBatch} * kTopK> out{};
      std::array<std::size_t, kBatch> counts{};
      core::SearchStats stats;
      const core::VectorStatus status = store.search_batch(these, core::SearchOptions{},
                                                           std::span<core::VectorHit>(out).first(n * kTopK),
                                                           std::span<std::size_t>(counts).first(n), &stats);
      keep(out);
      if (status != core::VectorStatus::ok) {
        c.what = core::vector_status_name(status);
        return false;
      }
      for (std::uint32_t i = 0; i < n; ++i)
        if (counts[i] != kTopK) {
          c.what = "fewer hits than asked";
          return false;
        }
      if (stats.rows_scored != rows.present_rows.size()) {
        c.what = "fewer rows scored than vectors stored";
        return false;
      }
      return true;
    };
  }
  cases.emplace_back(std::string(kSgemmName), kUnitMsPerQuery, [&sgemm](std::uint32_t) {
    keep(sgemm.run());
    return true;
  });
  cases.back().queries_per_call = kBatch;
  time_cases(config, cases);
  keep(sink);

  for (TimedCase& c : cases) {
    if (c.failures != 0) results.note_failures(c.name, c.failures, c.calls, c.what);
    Row row;
    row.name = c.name;
    row.unit = c.unit;
    row.stats = summarize(std::move(c.per_op_ms));
    const double median_ms = row.stats.median_ns;
    results.add_row(std::move(row));
    if (c.name == kStreamName) {
      fields.add(c.name, "bytes", rows.pass_bytes);
      fields.add(c.name, "vector_bits", std::uint64_t{bits});
      fields.add(c.name, "gb_per_s", static_cast<double>(rows.pass_bytes) / kBytesPerGB / (median_ms / 1e3),
                 kRateDecimals);
    } else {
      fields.add(c.name, "queries_per_s", 1e3 / median_ms, kRateDecimals);
    }
  }
  if (const Row* batch16 = results.find(kBatch16Name); batch16 != nullptr) {
    Row line;  // the same timings, as a ratio to the sgemm floor
    line.name = std::string(kBatch16SgemmName);
    line.unit = batch16->unit;
    line.stats = batch16->stats;
    results.add_row(std::move(line));
  }
  if (results.find(kSgemmName) != nullptr) fields.add_text(kSgemmName, "blas_core", SgemmFloor::core_name());
  if (const Row* single = results.find("vec.search.top10.cosine"); single != nullptr && single->stats.median_ns > 0)
    if (const Row* batch16 = results.find(kBatch16Name); batch16 != nullptr)
      fields.add(kBatch16Name, "speedup_vs_search", single->stats.median_ns / batch16->stats.median_ns, kRatioDecimals);
  const Row* dot_loop = results.find(kDotLoopName);
  for (const std::string_view name : {kBatch1Name, kBatch16Name}) {
    if (results.find(name) == nullptr) continue;
    fields.add_text(name, "kernel", core::kernel_name(kernel_used));
    fields.add(name, "batch", std::uint64_t{name == kBatch1Name ? 1U : kBatch});
  }
  for (const MetricCase& mc : kMetricCases) {
    const Row* row = results.find(mc.name);
    if (row == nullptr) continue;
    fields.add_text(mc.name, "kernel", core::kernel_name(kernel_used));
    if (dot_loop != nullptr && dot_loop->stats.median_ns > 0)
      fields.add(mc.name, "vs_dot_loop", row->stats.median_ns / dot_loop->stats.median_ns, kRatioDecimals);
  }
}

}  // namespace

int run_vector_suite(const std::vector<std::string>& all_args) {
  AnnOptions ann;  // --ann-1m, --ann-only: ann_cases.cpp
  const std::vector<std::string> args = take_ann_options(all_args, ann);
  int exit_code = kExitOk;
  const auto maybe_config = parse_suite_options(args, kUsage, exit_code);
  if (!maybe_config) return exit_code;
  const Config& config = *maybe_config;
  warn_if_unoptimised();
  const std::uint32_t vectors = config.quick ? kQuickVectors : kVectors;
  const std::uint32_t slots = config.quick ? kQuickSlots : kSlots;

  const std::string arena_name = "bench.vectors." + std::to_string(::getpid());
  core::ArenaOptions options;
  options.slot_count = slots;
  options.key_bytes = kKeyBytes;
  options.value_bytes = kValueBytes;
  options.vector_dim = kDim;
  options.channel_data_bytes = 0;  // no channels: this suite never touches them

  Results results;
  Fields fields;
  core::Kernel kernel = core::Kernel::best;
  const bool ran = ann.only || run_in_arena(arena_name, options, [&](core::Arena& arena) {
    run_cases(config, arena, vectors, results, fields, kernel);
  });
  if (!ran) return kExitFailed;
  run_ann_cases(config, ann, results, fields);
  run_embed_cases(config, results, fields);

  compare(results, kComparisons);
  char title[256];
  std::snprintf(title, sizeof title,
                "weir bench vectors: top-%zu of %u x %u f32 in %u rows, one thread, kernel %s; ms, median/min/max "
                "of %d repetitions of ~%lld ms each%s",
                kTopK, vectors, kDim, slots, core::kernel_name(kernel), config.reps,
                static_cast<long long>(config.rep_ns() / 1'000'000), config.quick ? " (--quick)" : "");
  print_report(results.rows(), fields, config.json, title);
  return exit_status(results);
}

}  // namespace weir::bench

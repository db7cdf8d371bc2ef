#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "arena_guard.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/limits.hpp"
#include "weir/core/vector_store.hpp"

using namespace weir::core;
using weir::test::ArenaGuard;
using weir::test::unique_name;

namespace {

constexpr std::uint32_t kRowPresentBit = 1;  // VectorRowHeader::flags bit 0 (arena_layout.hpp)

struct Fixture {
  explicit Fixture(std::uint32_t dim, std::uint32_t slots = 256)
      : guard(unique_name("vec")),
        arena(std::move(Arena::create(guard.where(), {.slot_count = slots, .value_bytes = 64, .vector_dim = dim}).value())),
        kv(arena),
        vs(arena) {}
  ArenaGuard guard;
  Arena arena;
  KvStore kv;
  VectorStore vs;

  VectorRowHeader& row(std::uint32_t slot) const {
    return *reinterpret_cast<VectorRowHeader*>(arena.region(Region::vectors) +
                                               std::uint64_t{slot} * vector_row_stride(arena.geometry().vector_dim));
  }
  KeyHandle handle(std::string_view key) {
    KeyHandle h;
    REQUIRE(kv.resolve(key, h) == KvStatus::ok);
    return h;
  }
};

std::vector<float> random_vector(std::mt19937& rng, std::uint32_t dim) {
  std::uniform_real_distribution<float> u(-1.0F, 1.0F);
  std::vector<float> v(dim);
  for (float& x : v) x = u(rng);
  return v;
}

std::string key_name(std::size_t i) { return "k" + std::to_string(i); }

// The reference score of one vector in double precision: larger is better for cosine and dot;
// for l2 it is the distance (smaller is better).
double reference_score(Metric metric, const std::vector<float>& q, const std::vector<float>& v) {
  double dot = 0, qq = 0, vv = 0, l2 = 0;
  for (std::size_t i = 0; i < q.size(); ++i) {
    const double a = q[i], b = v[i];
    dot += a * b;
    qq += a * a;
    vv += b * b;
    l2 += (a - b) * (a - b);
  }
  switch (metric) {
    case Metric::cosine: return qq > 0 && vv > 0 ? dot / std::sqrt(qq * vv) : 0.0;
    case Metric::dot: return dot;
    case Metric::l2: return std::sqrt(l2);
  }
  return 0.0;
}

bool better(Metric metric, double a, double b) { return metric == Metric::l2 ? a < b : a > b; }

std::vector<VectorHit> search(const VectorStore& vs, std::span<const float> q, Metric metric, std::size_t k,
                              Kernel kernel = Kernel::best, SearchStats* stats = nullptr) {
  std::vector<VectorHit> hits(k);
  std::size_t count = 0;
  REQUIRE(vs.search(q, SearchOptions{.metric = metric, .kernel = kernel}, hits, count, stats) == VectorStatus::ok);
  hits.resize(count);
  return hits;
}

std::string key_of(const VectorStore& vs, const VectorHit& hit) {
  std::vector<char> buf(vs.key_bytes());
  std::uint32_t length = 0;
  if (vs.key_of(hit, buf, length) != VectorStatus::ok) return {};
  return {buf.data(), length};
}

std::vector<Kernel> supported_kernels() {
  std::vector<Kernel> out;
  for (const Kernel k : {Kernel::portable, Kernel::avx2, Kernel::avx512})
    if (kernel_supported(k)) out.push_back(k);
  return out;
}

// Checks a top-k answer against the brute-force ranking: the same scores rank by rank, and every hit's
// score is its own vector's reference score (so keys and scores belong together).
void check_against_reference(const VectorStore& vs, const std::vector<std::vector<float>>& data,
                             const std::vector<float>& q, Metric metric, std::size_t k, Kernel kernel) {
  std::vector<double> ref(data.size());
  for (std::size_t i = 0; i < data.size(); ++i) ref[i] = reference_score(metric, q, data[i]);
  std::vector<double> sorted = ref;
  std::sort(sorted.begin(), sorted.end(), [&](double a, double b) { return better(metric, a, b); });

  const std::vector<VectorHit> hits = search(vs, q, metric, k, kernel);
  REQUIRE(hits.size() == std::min(k, data.size()));
  constexpr double kTolerance = 1e-4;  // float accumulation over up to 768 terms vs. double
  for (std::size_t r = 0; r < hits.size(); ++r) {
    const double want = sorted[r];
    INFO("metric ", metric_name(metric), ", kernel ", kernel_name(kernel), ", rank ", r);
    CHECK(std::abs(hits[r].score - want) <= kTolerance * (1.0 + std::abs(want)));
    const std::string key = key_of(vs, hits[r]);
    REQUIRE(key.size() > 1);
    const std::size_t index = std::stoul(key.substr(1));
    CHECK(std::abs(hits[r].score - ref[index]) <= kTolerance * (1.0 + std::abs(ref[index])));
    if (r > 0) CHECK_FALSE(better(metric, hits[r].score, hits[r - 1].score));  // best first
  }
}

}  // namespace

TEST_SUITE("core.vector_store") {

TEST_CASE("a vector round-trips through set, get and view, and its key exists with type none") {
  Fixture f(8);
  const std::vector<float> v{1, 2, 3, 4, 5, 6, 7, 8};
  REQUIRE(f.vs.set("emb", v) == VectorStatus::ok);
  std::vector<float> out(8);
  REQUIRE(f.vs.get("emb", out) == VectorStatus::ok);
  CHECK(out == v);
  std::byte none[8];
  ValueInfo info;
  REQUIRE(f.kv.get("emb", none, info) == KvStatus::ok);
  CHECK(info.type == ValueType::none);

  VectorView view;
  REQUIRE(f.vs.view("emb", view) == VectorStatus::ok);
  CHECK(view.size() == 8);
  CHECK(std::equal(v.begin(), v.end(), view.data()));
  CHECK(view.norm() == doctest::Approx(std::sqrt(204.0)));
  CHECK(view.valid());
  CHECK(reinterpret_cast<const std::byte*>(view.data()) >= f.arena.base());
  CHECK(reinterpret_cast<const std::byte*>(view.data()) < f.arena.base() + f.arena.bytes());

  const std::vector<float> w{8, 7, 6, 5, 4, 3, 2, 1};
  REQUIRE(f.vs.set("emb", w) == VectorStatus::ok);
  CHECK_FALSE(view.valid());
  REQUIRE(f.vs.get(f.handle("emb"), out) == VectorStatus::ok);
  CHECK(out == w);
}

TEST_CASE("wrong lengths, missing keys, non-finite values and arenas without vectors get clear statuses") {
  Fixture f(4);
  const std::vector<float> three{1, 2, 3};
  const std::vector<float> four{1, 2, 3, 4};
  std::vector<float> out3(3), out4(4);
  CHECK(f.vs.dim() == 4);
  CHECK(f.vs.set("a", three) == VectorStatus::wrong_length);
  CHECK(f.kv.count() == 0);  // a refused vector inserts no key
  REQUIRE(f.vs.set("a", four) == VectorStatus::ok);
  CHECK(f.vs.get("a", out3) == VectorStatus::wrong_length);
  CHECK(f.vs.get("missing", out4) == VectorStatus::not_found);
  REQUIRE(f.kv.set_text("plain", "no vector here") == KvStatus::ok);
  CHECK(f.vs.get("plain", out4) == VectorStatus::no_vector);
  CHECK(f.vs.set("", four) == VectorStatus::key_empty);
  CHECK(f.vs.set(std::string(200, 'x'), four) == VectorStatus::key_too_long);
  CHECK(f.vs.set("nan", std::vector<float>{1, NAN, 3, 4}) == VectorStatus::not_finite);
  CHECK(f.vs.set("inf", std::vector<float>{1, 2, INFINITY, 4}) == VectorStatus::not_finite);

  std::vector<VectorHit> hits(3);
  std::size_t count = 99;
  CHECK(f.vs.search(three, {}, hits, count) == VectorStatus::wrong_length);
  CHECK(count == 0);
  CHECK(f.vs.search(std::vector<float>{NAN, 0, 0, 0}, {}, hits, count) == VectorStatus::not_finite);

  ArenaGuard guard(unique_name("vec0"));
  Arena bare = std::move(Arena::create(guard.where(), {.slot_count = 16, .value_bytes = 64, .vector_dim = 0}).value());
  const VectorStore none(bare);
  CHECK(none.dim() == 0);
  VectorStore writable(bare);
  CHECK(writable.set("a", four) == VectorStatus::no_vectors);
  CHECK(none.get("a", out4) == VectorStatus::no_vectors);
  CHECK(none.search(four, {}, hits, count) == VectorStatus::no_vectors);
  CHECK(std::string(vector_status_text(VectorStatus::no_vectors)).find("without vectors") != std::string::npos);
}

TEST_CASE("a deleted key's vector disappears, and a reused slot never shows the old key's vector") {
  Fixture f(4, 16);
  const std::vector<float> v{1, 0, 0, 0};
  REQUIRE(f.vs.set("gone", v) == VectorStatus::ok);
  REQUIRE(f.vs.set("kept", std::vector<float>{0, 1, 0, 0}) == VectorStatus::ok);
  const KeyHandle old = f.handle("gone");
  REQUIRE(f.kv.del("gone") == KvStatus::ok);

  std::vector<float> out(4);
  CHECK(f.vs.get("gone", out) == VectorStatus::not_found);
  CHECK(f.vs.get(old, out) == VectorStatus::not_found);
  std::vector<VectorHit> hits = search(f.vs, v, Metric::dot, 4);
  REQUIRE(hits.size() == 1);
  CHECK(key_of(f.vs, hits[0]) == "kept");

  // The same key comes back in the same slot (its tombstone is reused) with a new generation.
  REQUIRE(f.kv.set_text("gone", "text now") == KvStatus::ok);
  const KeyHandle again = f.handle("gone");
  CHECK(again.slot == old.slot);
  CHECK(again.generation != old.generation);
  CHECK(f.vs.get("gone", out) == VectorStatus::no_vector);
  CHECK(f.vs.get(old, out) == VectorStatus::stale_handle);
  CHECK(search(f.vs, v, Metric::dot, 4).size() == 1);
  CHECK(f.vs.set(old, v) == VectorStatus::stale_handle);  // an old handle cannot write the new key's row

  REQUIRE(f.vs.set("gone", v) == VectorStatus::ok);
  CHECK(search(f.vs, v, Metric::dot, 4).size() == 2);
}

TEST_CASE("a hit names its key until the key is deleted") {
  Fixture f(4);
  REQUIRE(f.vs.set("alpha", std::vector<float>{1, 2, 3, 4}) == VectorStatus::ok);
  const std::vector<VectorHit> hits = search(f.vs, std::vector<float>{1, 2, 3, 4}, Metric::cosine, 1);
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].score == doctest::Approx(1.0));
  CHECK(key_of(f.vs, hits[0]) == "alpha");
  REQUIRE(f.kv.del("alpha") == KvStatus::ok);
  std::vector<char> buf(f.vs.key_bytes());
  std::uint32_t length = 0;
  CHECK(f.vs.key_of(hits[0], buf, length) == VectorStatus::not_found);
}

TEST_CASE("top-k matches a double-precision brute force for every metric and kernel") {
  struct Shape {
    std::uint32_t count, dim, slots;
  };
  for (const Shape shape : {Shape{2000, 64, 4096}, Shape{300, 768, 512}, Shape{500, 37, 1024}}) {
    INFO("shape ", shape.count, " x ", shape.dim);
    Fixture f(shape.dim, shape.slots);
    std::mt19937 rng(shape.dim);
    std::vector<std::vector<float>> data;
    for (std::uint32_t i = 0; i < shape.count; ++i) {
      data.push_back(random_vector(rng, shape.dim));
      REQUIRE(f.vs.set(key_name(i), data.back()) == VectorStatus::ok);
    }
    for (int trial = 0; trial < 3; ++trial) {
      const std::vector<float> q = random_vector(rng, shape.dim);
      for (const Metric metric : {Metric::cosine, Metric::dot, Metric::l2})
        for (const Kernel kernel : supported_kernels()) check_against_reference(f.vs, data, q, metric, 10, kernel);
    }
    // A query equal to a stored vector finds it first, at distance 0 and cosine 1.
    const std::vector<VectorHit> l2 = search(f.vs, data[7], Metric::l2, 1);
    REQUIRE(l2.size() == 1);
    CHECK(key_of(f.vs, l2[0]) == key_name(7));
    CHECK(l2[0].score == doctest::Approx(0.0).epsilon(1e-6));
    const std::vector<VectorHit> cos = search(f.vs, data[7], Metric::cosine, 1);
    CHECK(key_of(f.vs, cos[0]) == key_name(7));
    CHECK(cos[0].score == doctest::Approx(1.0));
  }
}

TEST_CASE("the SIMD kernels agree with the portable one on every row, at any dimension") {
  for (const std::uint32_t dim : {1U, 5U, 8U, 15U, 16U, 17U, 63U, 64U, 65U, 100U, 768U, 1000U}) {
    Fixture f(dim, 64);
    std::mt19937 rng(dim);
    for (std::uint32_t i = 0; i < 40; ++i) REQUIRE(f.vs.set(key_name(i), random_vector(rng, dim)) == VectorStatus::ok);
    const std::vector<float> q = random_vector(rng, dim);
    for (const Metric metric : {Metric::cosine, Metric::dot, Metric::l2}) {
      std::map<std::uint32_t, float> portable;
      for (const VectorHit& h : search(f.vs, q, metric, 40, Kernel::portable)) portable[h.slot] = h.score;
      REQUIRE(portable.size() == 40);
      for (const Kernel kernel : supported_kernels()) {
        const std::vector<VectorHit> hits = search(f.vs, q, metric, 40, kernel);
        REQUIRE(hits.size() == 40);
        for (const VectorHit& h : hits) {
          INFO("dim ", dim, ", metric ", metric_name(metric), ", kernel ", kernel_name(kernel));
          CHECK(h.score == doctest::Approx(portable[h.slot]).epsilon(1e-5).scale(1.0));
        }
      }
    }
  }
  CHECK(kernel_supported(Kernel::portable));
  CHECK(kernel_supported(Kernel::best));
  CHECK(kernel_supported(best_kernel()));
}

TEST_CASE("zero vectors and zero queries score 0 under cosine, never NaN") {
  Fixture f(16);
  std::mt19937 rng(1);
  REQUIRE(f.vs.set("zero", std::vector<float>(16, 0.0F)) == VectorStatus::ok);
  for (int i = 0; i < 5; ++i) REQUIRE(f.vs.set(key_name(static_cast<std::size_t>(i)), random_vector(rng, 16)) == VectorStatus::ok);
  for (const Kernel kernel : supported_kernels()) {
    const std::vector<float> q = random_vector(rng, 16);
    std::vector<VectorHit> hits = search(f.vs, q, Metric::cosine, 10, kernel);
    REQUIRE(hits.size() == 6);
    for (const VectorHit& h : hits) {
      CHECK_FALSE(std::isnan(h.score));
      if (key_of(f.vs, h) == "zero") CHECK(h.score == 0.0F);
    }
    hits = search(f.vs, std::vector<float>(16, 0.0F), Metric::cosine, 10, kernel);
    REQUIRE(hits.size() == 6);
    for (const VectorHit& h : hits) CHECK(h.score == 0.0F);
  }
}

TEST_CASE("concurrent writers and searchers never score a torn vector" * doctest::timeout(60.0)) {
  // Every write stores c = 2^j in all D elements, with the matching norm, so a dot product with an
  // all-ones query is exactly D * 2^j. For D a power of two, no mix of two such writes sums to D times
  // a power of two, so a torn vector cannot pass the check.
  constexpr std::uint32_t kDim = 256;
  constexpr std::uint32_t kRows = 16;
  constexpr std::uint32_t kPowers = 12;  // D * 2^11 < 2^24: every partial sum is exact in float
  Fixture f(kDim, 64);
  for (std::uint32_t i = 0; i < kRows; ++i) REQUIRE(f.vs.set(key_name(i), std::vector<float>(kDim, 1.0F)) == VectorStatus::ok);

  const auto valid = [](float score) {
    for (std::uint32_t j = 0; j < kPowers; ++j)
      if (score == static_cast<float>(kDim) * static_cast<float>(1U << j)) return true;
    return false;
  };
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> writes{0};
  const auto writer = [&](std::uint32_t seed) {
    std::vector<float> v(kDim);
    std::uint32_t n = seed;
    while (!stop.load(std::memory_order_relaxed)) {
      std::fill(v.begin(), v.end(), static_cast<float>(1U << (n % kPowers)));
      if (f.vs.set(key_name(n % kRows), v) == VectorStatus::ok) writes.fetch_add(1, std::memory_order_relaxed);
      ++n;
    }
  };
  std::thread w1(writer, 0U), w2(writer, 7U);

  std::uint64_t torn = 0, good = 0, reads_good = 0, reads_torn = 0, retries = 0, skipped = 0;
  const std::vector<float> ones(kDim, 1.0F);
  std::vector<VectorHit> hits(kRows);
  std::vector<float> out(kDim);
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
  for (std::uint32_t round = 0; std::chrono::steady_clock::now() < until; ++round) {
    for (const Kernel kernel : supported_kernels()) {
      std::size_t count = 0;
      SearchStats stats;
      REQUIRE(f.vs.search(ones, {.metric = Metric::dot, .kernel = kernel}, hits, count, &stats) == VectorStatus::ok);
      for (std::size_t i = 0; i < count; ++i) (valid(hits[i].score) ? good : torn) += 1;
      retries += stats.retries;
      skipped += stats.skipped_busy;
    }
    if (f.vs.get(key_name(round % kRows), out) == VectorStatus::ok)
      (std::all_of(out.begin(), out.end(), [&](float x) { return x == out[0]; }) ? reads_good : reads_torn) += 1;
  }
  stop = true;
  w1.join();
  w2.join();
  MESSAGE("scored ", good, ", retries ", retries, ", skipped busy ", skipped, ", writes ", writes.load());
  CHECK(torn == 0);
  CHECK(reads_torn == 0);
  CHECK(good > 0);
  CHECK(reads_good > 0);
  CHECK(writes.load() > 0);
}

TEST_CASE("a dead writer's row is recovered and skipped as torn until the vector is set again") {
  Fixture f(8);
  const std::vector<float> v(8, 1.0F);
  REQUIRE(f.vs.set("dead", v) == VectorStatus::ok);
  REQUIRE(f.vs.set("alive", v) == VectorStatus::ok);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) _exit(0);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);  // reaped: its pid is no longer alive

  // As the child would have left the row had it died mid-write.
  VectorRowHeader& row = f.row(f.handle("dead").slot);
  row.epoch.store(epoch_claimed(row.epoch.load(), static_cast<std::uint32_t>(child)));
  const std::uint64_t recovered_before = f.arena.header().recovered_slots.load();

  SearchStats stats;
  const std::vector<VectorHit> hits = search(f.vs, v, Metric::dot, 4, Kernel::best, &stats);
  CHECK(stats.recovered == 1);
  CHECK(stats.skipped_torn == 1);
  REQUIRE(hits.size() == 1);
  CHECK(key_of(f.vs, hits[0]) == "alive");
  CHECK(f.arena.header().recovered_slots.load() == recovered_before + 1);
  CHECK_FALSE(epoch_odd(row.epoch.load()));

  std::vector<float> out(8);
  CHECK(f.vs.get("dead", out) == VectorStatus::torn);
  VectorView view;
  CHECK(f.vs.view("dead", view) == VectorStatus::torn);
  CHECK(search(f.vs, v, Metric::dot, 4).size() == 1);  // still torn, still skipped
  REQUIRE(f.vs.set("dead", v) == VectorStatus::ok);
  CHECK(f.vs.get("dead", out) == VectorStatus::ok);
  CHECK(search(f.vs, v, Metric::dot, 4).size() == 2);
}

TEST_CASE("a row held by a live writer is skipped as busy without waiting, and readers time out") {
  Fixture f(8);
  const std::vector<float> v(8, 1.0F);
  REQUIRE(f.vs.set("held", v) == VectorStatus::ok);
  REQUIRE(f.vs.set("free", v) == VectorStatus::ok);
  VectorRowHeader& row = f.row(f.handle("held").slot);
  const std::uint64_t even = row.epoch.load();
  row.epoch.store(epoch_claimed(even, static_cast<std::uint32_t>(getpid())));  // our pid: alive

  std::vector<VectorHit> hits(4);
  std::size_t count = 0;
  SearchStats stats;
  REQUIRE(f.vs.search(v, {.metric = Metric::dot, .wait_ns = 0}, hits, count, &stats) == VectorStatus::ok);
  CHECK(count == 1);
  CHECK(stats.skipped_busy == 1);
  CHECK(stats.recovered == 0);
  CHECK(f.vs.set("held", v) == VectorStatus::busy);                 // EAGAIN at once
  CHECK(f.vs.set_wait("held", v, 5'000'000) == VectorStatus::busy);  // owner alive: no theft

  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    row.epoch.store(epoch_released(row.epoch.load()), std::memory_order_release);
  });
  CHECK(f.vs.set_wait("held", std::vector<float>(8, 2.0F), 2'000'000'000) == VectorStatus::ok);
  releaser.join();
  REQUIRE(f.vs.search(v, {.metric = Metric::dot}, hits, count, &stats) == VectorStatus::ok);
  CHECK(count == 2);
  CHECK(hits[0].score == 16.0F);
  CHECK((row.flags.load() & kRowPresentBit) != 0);
}

TEST_CASE("a batched search answers every query exactly as a search of it alone: hits, scores, ties, k past the count") {
  struct Shape {
    std::uint32_t count, dim, slots;
  };
  for (const Shape shape : {Shape{300, 768, 512}, Shape{500, 37, 1024}, Shape{130, 64, 256}}) {
    INFO("shape ", shape.count, " x ", shape.dim);
    Fixture f(shape.dim, shape.slots);
    std::mt19937 rng(shape.dim + 1);
    std::vector<std::vector<float>> data;
    for (std::uint32_t i = 0; i < shape.count; ++i) {
      // Every fifth vector repeats an earlier one: equal scores, whose order the heap decides.
      data.push_back(i % 5 == 4 ? data[i / 2] : random_vector(rng, shape.dim));
      REQUIRE(f.vs.set(key_name(i), data.back()) == VectorStatus::ok);
    }
    REQUIRE(f.vs.set("zero", std::vector<float>(shape.dim, 0.0F)) == VectorStatus::ok);
    for (std::uint32_t i = 0; i < shape.count; i += 7) REQUIRE(f.kv.del(key_name(i)) == KvStatus::ok);  // holes
    std::vector<float> queries;
    for (std::uint32_t q = 0; q < 37; ++q) {  // more than one pass of kSearchBatchQueries
      const std::vector<float> v = q % 6 == 5 ? data[q] : q == 3 ? std::vector<float>(shape.dim, 0.0F)
                                                                  : random_vector(rng, shape.dim);
      queries.insert(queries.end(), v.begin(), v.end());
    }
    for (const Kernel kernel : supported_kernels())
      for (const Metric metric : {Metric::cosine, Metric::dot, Metric::l2})
        for (const std::size_t k : {std::size_t{1}, std::size_t{10}, std::size_t{shape.count + 5}})
          for (const std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{4}, std::size_t{16}, std::size_t{37}}) {
            INFO("kernel ", kernel_name(kernel), ", metric ", metric_name(metric), ", k ", k, ", batch ", n);
            std::vector<VectorHit> hits(n * k);
            std::vector<std::size_t> counts(n, 99);
            SearchStats stats;
            REQUIRE(f.vs.search_batch(std::span<const float>(queries).first(n * shape.dim),
                                      SearchOptions{.metric = metric, .kernel = kernel}, hits, counts,
                                      &stats) == VectorStatus::ok);
            const std::uint64_t present = shape.count + 1 - (shape.count + 6) / 7;
            // Deleted keys' rows are scored too (their slots then refuse them): every row, once per pass.
            CHECK(stats.rows_scored == (shape.count + 1) * ((n + kSearchBatchQueries - 1) / kSearchBatchQueries));
            for (std::size_t q = 0; q < n; ++q) {
              const std::vector<VectorHit> alone =
                  search(f.vs, std::span<const float>(queries).subspan(q * shape.dim, shape.dim), metric, k, kernel);
              REQUIRE(counts[q] == alone.size());
              CHECK(counts[q] == std::min<std::size_t>(k, present));
              for (std::size_t r = 0; r < alone.size(); ++r) {
                const VectorHit& got = hits[q * k + r];
                INFO("query ", q, ", rank ", r);
                CHECK(got.slot == alone[r].slot);
                CHECK(got.generation == alone[r].generation);
                CHECK(std::bit_cast<std::uint32_t>(got.score) == std::bit_cast<std::uint32_t>(alone[r].score));
              }
            }
          }
  }
}

TEST_CASE("a batched search refuses wrong shapes and non-finite queries before scoring anything") {
  Fixture f(8);
  REQUIRE(f.vs.set("a", std::vector<float>(8, 1.0F)) == VectorStatus::ok);
  std::vector<float> queries(16, 0.5F);
  std::vector<VectorHit> hits(20);
  std::vector<std::size_t> counts(2, 7);
  const SearchOptions options{.metric = Metric::dot};
  CHECK(f.vs.search_batch(std::span<const float>(queries).first(15), options, hits, counts) == VectorStatus::wrong_length);
  CHECK(f.vs.search_batch(std::span<const float>{}, options, hits, std::span<std::size_t>{}) == VectorStatus::wrong_length);
  CHECK(f.vs.search_batch(queries, options, hits, std::span<std::size_t>(counts).first(1)) == VectorStatus::wrong_length);
  CHECK(f.vs.search_batch(queries, options, std::span<VectorHit>(hits).first(19), counts) == VectorStatus::wrong_length);
  queries[12] = std::numeric_limits<float>::infinity();
  CHECK(f.vs.search_batch(queries, options, hits, counts) == VectorStatus::not_finite);
  CHECK(counts == std::vector<std::size_t>{0, 0});
  queries[12] = 0.5F;
  REQUIRE(f.vs.search_batch(queries, options, hits, counts) == VectorStatus::ok);
  CHECK(counts == std::vector<std::size_t>{1, 1});
  CHECK(hits[0].score == 4.0F);
  CHECK(hits[10].score == 4.0F);
  REQUIRE(f.vs.search_batch(queries, options, std::span<VectorHit>{}, counts) == VectorStatus::ok);  // k = 0
  CHECK(counts == std::vector<std::size_t>{0, 0});

  ArenaGuard guard(unique_name("novec"));
  Arena bare = std::move(Arena::create(guard.where(), {.slot_count = 64, .value_bytes = 64, .vector_dim = 0}).value());
  CHECK(VectorStore(bare).search_batch(queries, options, hits, counts) == VectorStatus::no_vectors);
}

TEST_CASE("a batched search skips a row held by a live writer as busy, once for the whole batch") {
  Fixture f(8);
  const std::vector<float> v(8, 1.0F);
  REQUIRE(f.vs.set("held", v) == VectorStatus::ok);
  REQUIRE(f.vs.set("free", v) == VectorStatus::ok);
  VectorRowHeader& row = f.row(f.handle("held").slot);
  const std::uint64_t even = row.epoch.load();
  row.epoch.store(epoch_claimed(even, static_cast<std::uint32_t>(getpid())));  // our pid: alive
  std::vector<float> queries;
  for (int q = 0; q < 5; ++q) queries.insert(queries.end(), v.begin(), v.end());
  std::vector<VectorHit> hits(5 * 4);
  std::vector<std::size_t> counts(5);
  SearchStats stats;
  REQUIRE(f.vs.search_batch(queries, {.metric = Metric::dot, .wait_ns = 0}, hits, counts, &stats) == VectorStatus::ok);
  CHECK(counts == std::vector<std::size_t>(5, 1));
  CHECK(stats.skipped_busy == 1);
  CHECK(stats.rows_scored == 1);
  row.epoch.store(epoch_released(row.epoch.load()), std::memory_order_release);
  REQUIRE(f.vs.search_batch(queries, {.metric = Metric::dot}, hits, counts, &stats) == VectorStatus::ok);
  CHECK(counts == std::vector<std::size_t>(5, 2));
  CHECK(stats.skipped_busy == 0);
}

}  // TEST_SUITE

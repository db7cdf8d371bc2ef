// Batched search on the panel kernel (AVX-512 where the CPU has it): the same answers as search(),
// bit for bit, on data built to land many estimates within the panel's error bound; and never a torn
// score with writers rewriting rows, in threads or in another process.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <chrono>
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

struct Store {
  Store(std::uint32_t dim, std::uint32_t slots)
      : guard(unique_name("vecb")),
        arena(std::move(Arena::create(guard.where(), {.slot_count = slots, .value_bytes = 64, .vector_dim = dim}).value())),
        kv(arena),
        vs(arena) {}
  ArenaGuard guard;
  Arena arena;
  KvStore kv;
  VectorStore vs;
};

std::string key_name(std::size_t i) { return "b" + std::to_string(i); }

// Vectors in a few tight clusters far from the origin: scores within a cluster differ by less than
// the panel's error bound relative to the norms, so most rows are rescored by the row kernel, and the
// squared distances cancel (|q|^2 + |x|^2 is much larger than |q - x|^2). Every sixth row repeats an
// earlier one: ties.
std::vector<std::vector<float>> clustered(std::mt19937& rng, std::uint32_t count, std::uint32_t dim) {
  std::uniform_real_distribution<float> u(-1.0F, 1.0F);
  std::vector<std::vector<float>> centers(3, std::vector<float>(dim));
  for (auto& c : centers)
    for (float& x : c) x = 10.0F + u(rng);
  std::vector<std::vector<float>> out;
  for (std::uint32_t i = 0; i < count; ++i) {
    if (i % 6 == 5) {
      out.push_back(out[i / 3]);
      continue;
    }
    std::vector<float> v = centers[i % centers.size()];
    for (float& x : v) x += 1e-4F * u(rng);
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<float> random_vector(std::mt19937& rng, std::uint32_t dim) {
  std::uniform_real_distribution<float> u(-1.0F, 1.0F);
  std::vector<float> v(dim);
  for (float& x : v) x = u(rng);
  return v;
}

}  // namespace

TEST_SUITE("core.vector_batch") {

TEST_CASE("a batched search on panels answers every query bit for bit as search() alone, near-ties included") {
  struct Shape {
    std::uint32_t count, dim, slots;
    bool clusters;
  };
  // 768: the panel path; 100: a dimension off the 16-float grid; 1030: past kSearchPanelDims (tiles).
  for (const Shape shape : {Shape{400, 768, 512, true}, Shape{400, 768, 512, false}, Shape{300, 100, 512, true},
                            Shape{150, kSearchPanelDims + 6, 256, false}}) {
    INFO("shape ", shape.count, " x ", shape.dim, shape.clusters ? ", clustered" : ", uniform");
    Store s(shape.dim, shape.slots);
    std::mt19937 rng(shape.dim * 3 + (shape.clusters ? 1U : 0U));
    const std::vector<std::vector<float>> data =
        shape.clusters ? clustered(rng, shape.count, shape.dim) : [&] {
          std::vector<std::vector<float>> d;
          for (std::uint32_t i = 0; i < shape.count; ++i) d.push_back(random_vector(rng, shape.dim));
          return d;
        }();
    for (std::uint32_t i = 0; i < shape.count; ++i) REQUIRE(s.vs.set(key_name(i), data[i]) == VectorStatus::ok);
    for (std::uint32_t i = 0; i < shape.count; i += 9) REQUIRE(s.kv.del(key_name(i)) == KvStatus::ok);  // holes
    std::vector<float> queries;
    for (std::uint32_t q = 0; q < 20; ++q) {  // some are stored vectors: exact matches, distance 0
      std::vector<float> v = q % 4 == 1 ? data[q * 7 + 1] : shape.clusters ? clustered(rng, 1, shape.dim)[0]
                                                                           : random_vector(rng, shape.dim);
      queries.insert(queries.end(), v.begin(), v.end());
    }
    const std::size_t present = shape.count - (shape.count + 8) / 9;
    for (const Metric metric : {Metric::cosine, Metric::dot, Metric::l2})
      for (const std::size_t k : {std::size_t{10}, std::size_t{shape.count + 3}})
        for (const std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{16}, std::size_t{17}, std::size_t{20}}) {
          INFO("metric ", metric_name(metric), ", k ", k, ", batch ", n);
          std::vector<VectorHit> hits(n * k);
          std::vector<std::size_t> counts(n, 99);
          REQUIRE(s.vs.search_batch(std::span<const float>(queries).first(n * shape.dim), {.metric = metric}, hits,
                                    counts) == VectorStatus::ok);
          for (std::size_t q = 0; q < n; ++q) {
            std::vector<VectorHit> alone(k);
            std::size_t count = 0;
            REQUIRE(s.vs.search(std::span<const float>(queries).subspan(q * shape.dim, shape.dim), {.metric = metric},
                                alone, count) == VectorStatus::ok);
            REQUIRE(counts[q] == count);
            CHECK(count == std::min(k, present));
            for (std::size_t r = 0; r < count; ++r) {
              INFO("query ", q, ", rank ", r);
              CHECK(hits[q * k + r].slot == alone[r].slot);
              CHECK(hits[q * k + r].generation == alone[r].generation);
              CHECK(std::bit_cast<std::uint32_t>(hits[q * k + r].score) == std::bit_cast<std::uint32_t>(alone[r].score));
            }
          }
        }
  }
}

namespace {

// Every write stores c = 2^j in all elements, so a dot product with an all-ones query is exactly
// dim * 2^j, in any order of summation; no mix of two such writes gives dim times a power of two.
constexpr std::uint32_t kTornDim = 256;
constexpr std::uint32_t kTornRows = 40;
constexpr std::uint32_t kPowers = 12;  // dim * 2^11 < 2^24: every partial sum is exact in float

bool valid_score(float score) {
  for (std::uint32_t j = 0; j < kPowers; ++j)
    if (score == static_cast<float>(kTornDim) * static_cast<float>(1U << j)) return true;
  return false;
}

void rewrite_rows(VectorStore& vs, std::uint32_t seed, const std::atomic<bool>& stop, std::atomic<std::uint64_t>& writes) {
  std::vector<float> v(kTornDim);
  for (std::uint32_t n = seed; !stop.load(std::memory_order_relaxed); ++n) {
    std::fill(v.begin(), v.end(), static_cast<float>(1U << (n % kPowers)));
    if (vs.set(key_name(n % kTornRows), v) == VectorStatus::ok) writes.fetch_add(1, std::memory_order_relaxed);
  }
}

struct TornCount {
  std::uint64_t good = 0, torn = 0, retries = 0, skipped = 0;
};

// Batched dot searches of all-ones queries, 16 (panels) and 3 (tiles) at a time, for `ms`.
TornCount search_while_written(const VectorStore& vs, int ms) {
  TornCount c;
  const std::vector<float> ones(std::size_t{kTornDim} * 16, 1.0F);
  std::vector<VectorHit> hits(std::size_t{16} * kTornRows);
  std::vector<std::size_t> counts(16);
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < until) {
    for (const std::size_t n : {std::size_t{16}, std::size_t{3}}) {
      SearchStats stats;
      REQUIRE(vs.search_batch(std::span<const float>(ones).first(n * kTornDim), {.metric = Metric::dot},
                              std::span<VectorHit>(hits).first(n * kTornRows), std::span<std::size_t>(counts).first(n),
                              &stats) == VectorStatus::ok);
      for (std::size_t q = 0; q < n; ++q)
        for (std::size_t i = 0; i < counts[q]; ++i) (valid_score(hits[q * kTornRows + i].score) ? c.good : c.torn) += 1;
      c.retries += stats.retries;
      c.skipped += stats.skipped_busy;
    }
  }
  return c;
}

}  // namespace

TEST_CASE("batched searches never return a torn score while threads rewrite the rows" * doctest::timeout(60.0)) {
  Store s(kTornDim, 128);
  for (std::uint32_t i = 0; i < kTornRows; ++i)
    REQUIRE(s.vs.set(key_name(i), std::vector<float>(kTornDim, 1.0F)) == VectorStatus::ok);
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> writes{0};
  std::thread w1(rewrite_rows, std::ref(s.vs), 0U, std::cref(stop), std::ref(writes));
  std::thread w2(rewrite_rows, std::ref(s.vs), 5U, std::cref(stop), std::ref(writes));
  const TornCount c = search_while_written(s.vs, 1500);
  stop = true;
  w1.join();
  w2.join();
  MESSAGE("scored ", c.good, ", retries ", c.retries, ", skipped busy ", c.skipped, ", writes ", writes.load());
  CHECK(c.torn == 0);
  CHECK(c.good > 0);
  CHECK(writes.load() > 0);
}

TEST_CASE("batched searches never return a torn score while another process rewrites the rows" * doctest::timeout(60.0)) {
  Store s(kTornDim, 128);
  for (std::uint32_t i = 0; i < kTornRows; ++i)
    REQUIRE(s.vs.set(key_name(i), std::vector<float>(kTornDim, 1.0F)) == VectorStatus::ok);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // the writer: rewrites rows in the shared mapping for a while, then exits
    std::atomic<bool> stop{false};
    std::atomic<std::uint64_t> writes{0};
    std::thread timer([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      stop = true;
    });
    rewrite_rows(s.vs, 3U, stop, writes);
    timer.join();
    _exit(writes.load() > 0 ? 0 : 3);
  }
  const TornCount c = search_while_written(s.vs, 1200);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  MESSAGE("scored ", c.good, ", retries ", c.retries, ", skipped busy ", c.skipped);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(c.torn == 0);
  CHECK(c.good > 0);
}

}  // TEST_SUITE

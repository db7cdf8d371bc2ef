// Sizing by count: an arena sized for N keys takes N keys with random names (and their vectors), the
// headroom besides, and keeps taking them under churn; its cost adds up to the real mapping.
#include <doctest/doctest.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "arena_guard.hpp"
#include "weir/core/arena_sizing.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/limits.hpp"
#include "weir/core/vector_store.hpp"

using namespace weir::core;
using weir::test::ArenaGuard;
using weir::test::unique_name;

namespace {

constexpr std::uint32_t kDim = 8;

std::string random_key(std::mt19937_64& rng) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "p/%016llx", static_cast<unsigned long long>(rng()));
  return buf;
}

ArenaOptions small_rows() { return {.value_bytes = 64, .vector_dim = kDim}; }

// Inserts keys with vectors until `count` are in or one fails; returns how many went in.
std::uint64_t fill(VectorStore& vs, std::mt19937_64& rng, std::uint64_t count, std::vector<std::string>* names = nullptr) {
  const std::vector<float> v(kDim, 1.0F);
  for (std::uint64_t i = 0; i < count; ++i) {
    std::string key = random_key(rng);
    const VectorStatus st = vs.set(key, v);
    if (st != VectorStatus::ok) {
      MESSAGE("insert ", i, " of ", count, " failed: ", std::string(vector_status_name(st)));
      return i;
    }
    if (names != nullptr) names->push_back(std::move(key));
  }
  return count;
}

}  // namespace

TEST_SUITE("core.sizing") {

TEST_CASE("the rule: keys plus headroom at the sized load, the sized probe window, other options kept") {
  CHECK(sized_slot_count(100'000) == 142'949);  // ceil(100064 / 0.7)
  CHECK(sized_slot_count(1) == 93);             // ceil(65 / 0.7)
  CHECK(sized_slot_count(max_sized_keys()) <= kMaxSlotCount);
  CHECK(sized_slot_count(max_sized_keys() + 1) > kMaxSlotCount);
  auto o = sized_for_keys(100'000, {.key_bytes = 48, .value_bytes = kVectorValueBytes, .vector_dim = 768});
  REQUIRE(o);
  CHECK(o->slot_count == 142'949);
  CHECK(o->max_probe == kSizedMaxProbe);
  CHECK(o->key_bytes == 48);
  CHECK(o->value_bytes == kVectorValueBytes);
  CHECK(o->vector_dim == 768);

  auto zero = sized_for_keys(0, {});
  REQUIRE_FALSE(zero);
  CHECK(zero.error().code == Errc::invalid_argument);
  auto huge = sized_for_keys(max_sized_keys() + 1, {});
  REQUIRE_FALSE(huge);
  CHECK(huge.error().what.find(std::to_string(max_sized_keys() + 1)) != std::string::npos);
}

TEST_CASE("the cost adds up to the mapping create makes, and vector rows are one per slot") {
  auto o = sized_for_keys(1000, small_rows());
  REQUIRE(o);
  auto cost = arena_cost(*o);
  REQUIRE(cost);
  CHECK(cost->vectors == std::uint64_t{o->slot_count} * vector_row_stride(kDim));
  CHECK(cost->slots >= std::uint64_t{o->slot_count} * slot_stride_for(o->key_bytes, o->value_bytes));
  CHECK(cost->total == cost->slots + cost->vectors + cost->other);
  ArenaGuard guard(unique_name("size"));
  auto arena = Arena::create(guard.where(), *o);
  REQUIRE(arena);
  CHECK(arena->bytes() == cost->total);
  CHECK(arena->geometry().max_probe == kSizedMaxProbe);

  ArenaOptions bad = small_rows();
  bad.slot_count = 0;
  CHECK_FALSE(arena_cost(bad));
}

TEST_CASE("an arena sized for 100000 vectors takes 100000 random keys with vectors, and its headroom") {
  auto o = sized_for_keys(100'000, small_rows());
  REQUIRE(o);
  ArenaGuard guard(unique_name("size"));
  auto arena = Arena::create(guard.where(), *o);
  REQUIRE(arena);
  VectorStore vs(*arena);
  std::mt19937_64 rng(20261204);
  CHECK(fill(vs, rng, 100'000 + kSizedHeadroomKeys) == 100'000 + kSizedHeadroomKeys);
  CHECK(KvStore(*arena).count() == 100'000 + kSizedHeadroomKeys);
}

TEST_CASE("the table size alone does not hold that many keys: the old 64-entry window fills near two thirds") {
  ArenaOptions o = small_rows();
  o.slot_count = 20'000;  // the same table size as keys wanted, default window
  ArenaGuard guard(unique_name("size"));
  auto arena = Arena::create(guard.where(), o);
  REQUIRE(arena);
  VectorStore vs(*arena);
  std::mt19937_64 rng(7);
  const std::uint64_t in = fill(vs, rng, 20'000);
  CHECK(in < 20'000 * 9 / 10);  // why sizing by count exists
  CHECK(in > 20'000 / 2);
}

TEST_CASE("sized arenas of many sizes take their count of random keys, and keep taking them under churn") {
  std::mt19937_64 seeds(42);
  for (const std::uint64_t n : {1ULL, 7ULL, 100ULL, 1'000ULL, 4'096ULL, 10'000ULL, 30'000ULL}) {
    CAPTURE(n);
    auto o = sized_for_keys(n, small_rows());
    REQUIRE(o);
    ArenaGuard guard(unique_name("size"));
    auto arena = Arena::create(guard.where(), *o);
    REQUIRE(arena);
    VectorStore vs(*arena);
    KvStore kv(*arena);
    std::mt19937_64 rng(seeds());
    std::vector<std::string> names;
    REQUIRE(fill(vs, rng, n + kSizedHeadroomKeys, &names) == n + kSizedHeadroomKeys);
    // Churn: delete a random half, insert as many new names (deleted entries become tombstones that
    // inserts reuse); the live count never passes what the arena was sized for.
    for (int round = 0; round < 4; ++round) {
      const std::size_t drop = names.size() / 2;
      for (std::size_t i = 0; i < drop; ++i) {
        const std::size_t j = rng() % names.size();
        REQUIRE(kv.del(names[j]) == KvStatus::ok);
        names[j] = std::move(names.back());
        names.pop_back();
      }
      REQUIRE(fill(vs, rng, drop, &names) == drop);
    }
    CHECK(kv.count() == n + kSizedHeadroomKeys);
  }
}

TEST_CASE("how far past its count a sized arena fills before a window is full (the margin of the rule)") {
  auto o = sized_for_keys(20'000, small_rows());
  REQUIRE(o);
  ArenaGuard guard(unique_name("size"));
  auto arena = Arena::create(guard.where(), *o);
  REQUIRE(arena);
  VectorStore vs(*arena);
  std::mt19937_64 rng(99);
  const std::uint64_t in = fill(vs, rng, o->slot_count);
  const double load = static_cast<double>(in) / o->slot_count;
  MESSAGE("sized for 20000 keys: ", o->slot_count, " slots, first full window after ", in, " keys (load ", load, ")");
  CHECK(load > 0.8);  // the sized load is 0.7; a first full window comes at 0.84..0.93
}

}  // TEST_SUITE

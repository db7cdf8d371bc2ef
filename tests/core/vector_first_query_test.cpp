// A first query from a fresh process pays for the pages it reads, not for the arena's size: opening
// maps without touching the partition, and one vector plus ten keys by slot fault in a few pages.
#include <doctest/doctest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <random>
#include <string>
#include <vector>

#include "arena_guard.hpp"
#include "weir/core/arena_sizing.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/vector_store.hpp"

using namespace weir::core;
using weir::test::ArenaGuard;
using weir::test::unique_name;

namespace {

constexpr std::uint32_t kDim = 256;
constexpr std::uint64_t kKeys = 20'000;  // 28 663 rows of 1088 B: about 7 600 pages of vectors
constexpr int kHits = 10;

long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

std::string key_name(std::uint64_t i) { return "p/" + std::to_string(i); }

// In a forked child, so the arena is mapped afresh: opens it, reads one key's vector and the keys of
// ten hits, and reports the page faults that took (-1 on any failure).
long first_query_faults(const std::string& where, const std::array<VectorHit, kHits>& hits) {
  std::vector<float> out(kDim);
  std::array<char, 64> key{};
  const long before = minor_faults();
  auto arena = Arena::open(where);
  if (!arena) return -1;
  VectorStore vs(*arena);
  if (vs.get(key_name(7), out) != VectorStatus::ok) return -1;
  for (const VectorHit& hit : hits) {
    std::uint32_t length = 0;
    if (vs.key_of(hit, key, length) != VectorStatus::ok) return -1;
  }
  return minor_faults() - before;
}

}  // namespace

TEST_SUITE("core.sizing") {

TEST_CASE("a fresh process reads one vector and ten keys by slot in a few page faults, whatever the partition's size") {
  auto o = sized_for_keys(kKeys, {.key_bytes = 32, .value_bytes = 64, .vector_dim = kDim});
  REQUIRE(o);
  ArenaGuard guard(unique_name("first"));
  auto arena = Arena::create(guard.where(), *o);
  REQUIRE(arena);
  VectorStore vs(*arena);
  KvStore kv(*arena);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1.0F, 1.0F);
  std::vector<float> v(kDim);
  for (std::uint64_t i = 0; i < kKeys; ++i) {
    for (float& x : v) x = u(rng);
    REQUIRE(vs.set(key_name(i), v) == VectorStatus::ok);
  }
  std::array<VectorHit, kHits> hits{};
  for (int i = 0; i < kHits; ++i) {
    KeyHandle h;
    REQUIRE(kv.resolve(key_name(static_cast<std::uint64_t>(i) * 1999 + 11), h) == KvStatus::ok);
    hits[static_cast<std::size_t>(i)] = VectorHit{h.slot, h.generation, 0.0F};
  }
  const std::uint64_t vector_pages = arena->geometry().vector_count * vector_row_stride(kDim) / 4096;

  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const long faults = first_query_faults(guard.where(), hits);
    const bool sent = write(fds[1], &faults, sizeof(faults)) == static_cast<ssize_t>(sizeof(faults));
    _exit(sent ? 0 : 1);
  }
  close(fds[1]);
  long faults = -2;
  const bool got = read(fds[0], &faults, sizeof(faults)) == static_cast<ssize_t>(sizeof(faults));
  close(fds[0]);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(got);
  MESSAGE("first query in a fresh process: ", faults, " minor faults; the vector rows span ", vector_pages, " pages");
  REQUIRE(faults >= 0);
  // Header, attach row, a few index and slot pages, one row, ten slots, and the child's own
  // copy-on-write stack and heap: tens of pages, against thousands for the partition.
  CHECK(faults < 200);
  CHECK(vector_pages > 5000);
}

}  // TEST_SUITE

// Writers that die inside a slot: SIGKILL at random moments, and deterministic deaths with the
// slot's epoch left odd. A dead writer's value is either intact or reported torn, never silently
// corrupt, and its slot never stays stuck.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "payload.hpp"
#include "proc_util.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/kv_store.hpp"

using namespace weir::core;
using namespace weir::test;
using std::chrono::microseconds;
using std::chrono::nanoseconds;

namespace {

constexpr std::uint32_t kValueBytes = 4096;
constexpr std::uint32_t kSmallArenaSlots = 64;
constexpr int kKillRounds = 200;
constexpr auto kKillBudget = std::chrono::seconds(10);
constexpr int kMaxKillDelayUs = 400;         // the writer dies 0..this many µs after its first write
constexpr auto kRecoveryBound = milliseconds(1000);  // a dead writer's slot must be usable within this

std::uint64_t test_seed() {
  return static_cast<std::uint64_t>(getpid()) ^
         static_cast<std::uint64_t>(Clock::now().time_since_epoch().count());
}

ArenaOptions small_arena() {
  ArenaOptions options;
  options.slot_count = kSmallArenaSlots;
  options.value_bytes = kValueBytes;
  return options;
}

SlotHeader& slot_header(const Arena& arena, std::uint32_t slot) {
  return *reinterpret_cast<SlotHeader*>(arena.region(Region::slots) +
                                        std::uint64_t{slot} * arena.geometry().slot_stride);
}

// Slots whose epoch is odd, with or without an owner pid recorded in the word.
int odd_slots(const Arena& arena, bool with_owner) {
  int n = 0;
  for (std::uint32_t i = 0; i < arena.geometry().slot_count; ++i) {
    const std::uint64_t w = slot_header(arena, i).epoch.load();
    if (epoch_odd(w) && (epoch_owner(w) != 0) == with_owner) ++n;
  }
  return n;
}

std::string name_of(KvStatus st) { return kv_status_name(st); }

// Retries set_wait with its default timeout until it succeeds or the bound passes.
KvStatus rewrite_within(KvStore& kv, const std::string& key, std::span<const std::byte> value,
                        milliseconds bound) {
  const auto deadline = Clock::now() + bound;
  KvStatus st = kv.set_wait(key, value);
  while (st == KvStatus::busy && Clock::now() < deadline) st = kv.set_wait(key, value);
  return st;
}

}  // namespace

TEST_SUITE("integration.kill_writer") {

TEST_CASE("a writer killed at a random moment leaves its value intact or torn, and the slot writable" *
          doctest::timeout(60)) {
  ArenaGuard guard(unique_name("kill"));
  auto arena = Arena::create(guard.where(), small_arena());
  REQUIRE(arena);
  KvStore kv(*arena);
  const std::string key = "victim";
  std::vector<std::byte> value(kValueBytes);
  fill_payload(value, 0);
  REQUIRE(kv.set_wait(key, value) == KvStatus::ok);  // the child only overwrites: no half-inserted key

  const std::uint64_t seed = test_seed();
  MESSAGE("seed " << seed);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> delay_us(0, kMaxKillDelayUs);

  int rounds = 0, intact = 0, torn = 0, bad = 0, busy_after = 0, other = 0, stuck = 0, not_ready = 0;
  int stuck_ownerless = 0;  // stuck rounds whose slot was odd with no owner pid recorded
  nanoseconds slowest_get{0};
  const auto budget_end = Clock::now() + kKillBudget;
  for (; rounds < kKillRounds && Clock::now() < budget_end; ++rounds) {
    const auto base = static_cast<std::uint64_t>(rounds + 1) << 32;
    Child writer = Child::spawn([&](ChildLink& link) {
      KvStore mine(*arena);
      std::vector<std::byte> mine_value(kValueBytes);
      bool told = false;
      for (std::uint64_t n = base;; ++n) {
        fill_payload(mine_value, n);
        if (mine.set(key, mine_value) == KvStatus::ok && !told) {
          link.ready();
          told = true;
        }
      }
      return 0;
    });
    REQUIRE(writer.valid());
    if (!writer.wait_ready(milliseconds(5000))) ++not_ready;
    std::this_thread::sleep_for(microseconds(delay_us(rng)));
    const ExitStatus ended = writer.kill_now();
    REQUIRE(ended.signal == SIGKILL);

    std::vector<std::byte> out(kValueBytes);
    ValueInfo info;
    const auto t0 = Clock::now();
    const KvStatus got = kv.get(key, out, info);
    slowest_get = std::max(slowest_get, Clock::now() - t0);
    if (got == KvStatus::ok) {
      ++(info.length == kValueBytes && payload_ok(out) ? intact : bad);
    } else if (got == KvStatus::torn) {
      ++torn;
    } else if (got == KvStatus::busy) {
      ++busy_after;
    } else {
      ++other;
    }

    fill_payload(value, base - 1);
    const KvStatus rewritten = rewrite_within(kv, key, value, kRecoveryBound);
    if (rewritten != KvStatus::ok) {
      ++stuck;
      if (odd_slots(*arena, false) != 0) ++stuck_ownerless;
      // Keep the remaining rounds meaningful: wait as long as it takes the core to give the slot up.
      REQUIRE(kv.set_wait(key, value, ValueType::bytes, 5'000'000'000) == KvStatus::ok);
    }
    std::vector<std::byte> again(kValueBytes);
    REQUIRE(kv.get(key, again, info) == KvStatus::ok);
    CHECK(payload_ok(again));
    CHECK(payload_counter(again) == base - 1);
  }

  MESSAGE(rounds << " rounds: " << intact << " intact, " << torn << " torn, " << busy_after
                 << " busy right after the kill, " << stuck << " stuck past " << kRecoveryBound.count()
                 << " ms (" << stuck_ownerless << " of them odd with no owner recorded); slowest get " << std::chrono::duration_cast<microseconds>(slowest_get).count()
                 << " us; recovered_slots " << arena->header().recovered_slots.load());
  CHECK(rounds >= kKillRounds / 4);
  CHECK(not_ready == 0);
  CHECK(bad == 0);  // safety: no corrupt value ever reads as ok
  CHECK(other == 0);
  CHECK(busy_after == 0);
  CHECK(stuck == 0);  // liveness: set_wait always gets the slot back
  CHECK(intact + torn == rounds);
}

TEST_CASE("a writer that dies holding a slot leaves the value torn until the next write") {
  ArenaGuard guard(unique_name("dead-owner"));
  auto arena = Arena::create(guard.where(), small_arena());
  REQUIRE(arena);
  KvStore kv(*arena);
  const std::string key = "held";
  std::vector<std::byte> value(kValueBytes);
  fill_payload(value, 1);
  REQUIRE(kv.set_wait(key, value) == KvStatus::ok);
  KeyHandle handle;
  REQUIRE(kv.resolve(key, handle) == KvStatus::ok);
  const std::uint64_t recovered_before = arena->header().recovered_slots.load();

  Child writer = Child::spawn([&](ChildLink&) {
    SlotHeader& s = slot_header(*arena, handle.slot);
    std::uint64_t epoch = s.epoch.load();
    const std::uint64_t claimed = epoch_claimed(epoch, static_cast<std::uint32_t>(getpid()));
    if (epoch_odd(epoch) || !s.epoch.compare_exchange_strong(epoch, claimed)) return 1;
    return 0;  // dies with the epoch odd, as a writer killed mid-copy does
  });
  REQUIRE(writer.valid());
  const ExitStatus ended = writer.wait();
  REQUIRE(ended.exited);
  REQUIRE(ended.code == 0);
  REQUIRE((slot_header(*arena, handle.slot).epoch.load() & 1U) == 1U);

  std::vector<std::byte> out(kValueBytes);
  ValueInfo info;
  const auto t0 = Clock::now();
  const KvStatus got = kv.get(key, out, info);
  const auto took = Clock::now() - t0;
  MESSAGE("get after the owner died took " << std::chrono::duration_cast<microseconds>(took).count() << " us");
  CHECK(got == KvStatus::torn);
  CHECK(took < milliseconds(500));
  CHECK(arena->header().recovered_slots.load() == recovered_before + 1);
  CHECK((slot_header(*arena, handle.slot).epoch.load() & 1U) == 0U);

  SUBCASE("the torn flag survives further reads, by key and by handle") {
    CHECK(kv.get(key, out, info) == KvStatus::torn);
    CHECK(kv.get(handle, out, info) == KvStatus::torn);
    ValueView view;
    CHECK(kv.view(key, view) == KvStatus::torn);
  }
  SUBCASE("the next write clears it") {
    fill_payload(value, 2);
    CHECK(kv.set_wait(key, value) == KvStatus::ok);
    REQUIRE(kv.get(key, out, info) == KvStatus::ok);
    CHECK(payload_ok(out));
    CHECK(payload_counter(out) == 2);
    auto status = inspect(guard.where());
    REQUIRE(status);
    CHECK(status->recovered_slots == recovered_before + 1);
  }
}

TEST_CASE("an odd epoch that names no live process does not leave the slot stuck" * doctest::timeout(30)) {
  // Claims record the pid in the same CAS, so only a foreign or damaged word can be odd with pid 0.
  ArenaGuard guard(unique_name("no-owner"));
  auto arena = Arena::create(guard.where(), small_arena());
  REQUIRE(arena);
  KvStore kv(*arena);
  const std::string key = "ownerless";
  std::vector<std::byte> value(kValueBytes);
  fill_payload(value, 1);
  REQUIRE(kv.set_wait(key, value) == KvStatus::ok);
  KeyHandle handle;
  REQUIRE(kv.resolve(key, handle) == KvStatus::ok);

  Child writer = Child::spawn([&](ChildLink&) {
    SlotHeader& s = slot_header(*arena, handle.slot);
    std::uint64_t epoch = s.epoch.load();
    if (epoch_odd(epoch) || !s.epoch.compare_exchange_strong(epoch, epoch | kEpochOdd)) return 1;
    return 0;
  });
  REQUIRE(writer.valid());
  const ExitStatus ended = writer.wait();
  REQUIRE(ended.exited);
  REQUIRE(ended.code == 0);

  // Every call is a default, bounded one; together they get a generous second.
  const auto t0 = Clock::now();
  std::vector<std::byte> out(kValueBytes);
  ValueInfo info;
  const KvStatus first_get = kv.get(key, out, info);
  fill_payload(value, 2);
  const KvStatus rewritten = rewrite_within(kv, key, value, kRecoveryBound);
  const auto took = Clock::now() - t0;
  MESSAGE("first get: " << name_of(first_get) << "; rewrite: " << name_of(rewritten) << " after "
                        << std::chrono::duration_cast<milliseconds>(took).count() << " ms");
  CHECK(first_get != KvStatus::ok);
  CHECK(rewritten == KvStatus::ok);
  if (rewritten == KvStatus::ok) {
    REQUIRE(kv.get(key, out, info) == KvStatus::ok);
    CHECK(payload_counter(out) == 2);
  }
}

TEST_CASE("processes killed during insert and delete churn leave no duplicate and no stuck key" *
          doctest::timeout(60)) {
  ArenaGuard guard(unique_name("churn-kill"));
  ArenaOptions options = small_arena();
  options.value_bytes = 64;
  auto arena = Arena::create(guard.where(), options);
  REQUIRE(arena);
  KvStore kv(*arena);
  constexpr int kKeys = 16;
  constexpr int kChurners = 2;
  constexpr int kRounds = 150;
  const auto key_of = [](int i) { return "churn." + std::to_string(i); };

  const std::uint64_t seed = test_seed();
  MESSAGE("seed " << seed);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> delay_us(0, 3000);
  int rounds = 0, duplicate_rounds = 0;
  const auto budget_end = Clock::now() + std::chrono::seconds(4);
  for (; rounds < kRounds && Clock::now() < budget_end; ++rounds) {
    std::vector<Child> churners;
    for (int c = 0; c < kChurners; ++c) {
      const std::uint64_t child_seed = rng();
      churners.push_back(Child::spawn([&](ChildLink& link) {
        KvStore mine(*arena);
        std::mt19937_64 r(child_seed);
        std::vector<std::byte> v(64);
        link.ready();
        for (std::uint64_t n = 0;; ++n) {
          const auto k = key_of(static_cast<int>(r() % kKeys));
          if ((r() & 1U) != 0) {
            fill_payload(v, n);
            (void)mine.set(k, v);
          } else {
            (void)mine.del(k);
          }
        }
        return 0;
      }));
      REQUIRE(churners.back().valid());
    }
    for (auto& c : churners) CHECK(c.wait_ready(milliseconds(5000)));
    std::this_thread::sleep_for(microseconds(delay_us(rng)));
    for (auto& c : churners) REQUIRE(c.kill_now().signal == SIGKILL);

    std::map<std::string, int> seen;
    kv.for_each_key([&](std::string_view k, const ValueInfo&) { ++seen[std::string(k)]; });
    bool duplicate = false;
    for (const auto& [k, n] : seen) duplicate = duplicate || n > 1;
    if (duplicate) ++duplicate_rounds;
  }
  MESSAGE(rounds << " rounds; recovered_slots " << arena->header().recovered_slots.load());
  MESSAGE("slots left odd by the kills: " << odd_slots(*arena, true) << " with a dead owner recorded, "
                                          << odd_slots(*arena, false) << " with no owner recorded");
  CHECK(duplicate_rounds == 0);

  // Every key can be written and read back afterwards, exactly once each.
  std::vector<std::byte> v(64);
  const auto phase_end = Clock::now() + 2 * kRecoveryBound;  // bounds this phase if slots stay stuck
  for (int i = 0; i < kKeys; ++i) {
    fill_payload(v, static_cast<std::uint64_t>(i));
    const auto left = std::max(milliseconds(1), std::chrono::duration_cast<milliseconds>(phase_end - Clock::now()));
    const KvStatus st = rewrite_within(kv, key_of(i), v, std::min(kRecoveryBound, left));
    CHECK_MESSAGE(st == KvStatus::ok, key_of(i) << ": " << name_of(st));
  }
  MESSAGE("after rewriting: " << odd_slots(*arena, false) << " slots still odd with no owner recorded");
  std::vector<std::byte> out(64);
  for (int i = 0; i < kKeys; ++i) {
    ValueInfo info;
    const KvStatus st = kv.get(key_of(i), out, info);
    CHECK_MESSAGE(st == KvStatus::ok, key_of(i) << ": " << name_of(st));
    if (st == KvStatus::ok) CHECK(payload_counter(out) == static_cast<std::uint64_t>(i));
  }
  std::map<std::string, int> seen;
  kv.for_each_key([&](std::string_view k, const ValueInfo&) { ++seen[std::string(k)]; });
  CHECK(seen.size() == static_cast<std::size_t>(kKeys));
  for (const auto& [k, n] : seen) CHECK_MESSAGE(n == 1, k << " appears " << n << " times");
}

}  // TEST_SUITE

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "arena_guard.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/signals.hpp"

using namespace weir::core;
using weir::test::ArenaGuard;
using weir::test::unique_name;
using namespace std::chrono_literals;

namespace {

struct Fixture {
  Fixture() : guard(unique_name("sig")), arena(std::move(Arena::create(guard.where(), options()).value())), kv(arena) {}
  static ArenaOptions options() { return {.slot_count = 256, .value_bytes = 256, .vector_dim = 0, .group_log_entries = 64}; }
  ArenaGuard guard;
  Arena arena;
  KvStore kv;
};

constexpr std::int64_t kLong = 5'000'000'000;   // a wait that must end by a pulse, not by this
constexpr std::int64_t kShort = 50'000'000;     // a wait expected to time out

}  // namespace

TEST_SUITE("core.signals") {

TEST_CASE("a label sets a few bits of a 64-bit mask, the same bits every time") {
  const std::uint64_t m = label_mask("adc");
  CHECK(m != 0);
  CHECK(__builtin_popcountll(m) <= static_cast<int>(kBloomBitsPerLabel));
  CHECK(label_mask("adc") == m);
  CHECK(label_mask("adc") != label_mask("temp"));
}

TEST_CASE("a write to a labelled key wakes a watcher of that label") {
  Fixture f;
  const std::vector<std::string> labels{"adc"};
  REQUIRE(set_labels(f.arena, "adc0", labels));
  auto w = Watcher::create(f.arena);
  REQUIRE(w);
  REQUIRE(w->subscribe_label("adc"));
  CHECK(w->wait(kShort) == WaitStatus::timed_out);
  std::thread writer([&] {
    std::this_thread::sleep_for(20ms);
    CHECK(f.kv.set_i64("adc0", 42) == KvStatus::ok);
  });
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(w->wait(kLong) == WaitStatus::pulsed);
  CHECK(std::chrono::steady_clock::now() - t0 < 2s);
  writer.join();
  std::vector<Change> changes;
  CHECK(w->drain([&](const Change& c) { changes.push_back(c); }) == 0);
  REQUIRE(changes.size() == 1);
  char key[64];
  std::uint32_t length = 0;
  ValueInfo info;
  REQUIRE(f.kv.key_at(changes[0].slot, key, length, info) == KvStatus::ok);
  CHECK(std::string(key, length) == "adc0");
}

TEST_CASE("a key subscription hears that key and no other") {
  Fixture f;
  auto w = Watcher::create(f.arena);
  REQUIRE(w);
  REQUIRE(w->subscribe_key("run.state"));
  REQUIRE(f.kv.set_text("other", "x") == KvStatus::ok);
  CHECK(w->wait(kShort) == WaitStatus::timed_out);
  REQUIRE(f.kv.set_text("run.state", "armed") == KvStatus::ok);
  CHECK(w->wait(kShort) == WaitStatus::pulsed);
  std::uint64_t r = 0;
  REQUIRE(f.kv.atomic("run.state.count", AtomicOp::add, 1, r) == KvStatus::ok);  // a different key
  CHECK(w->wait(kShort) == WaitStatus::timed_out);
  REQUIRE(f.kv.del("run.state") == KvStatus::ok);
  CHECK(w->wait(kShort) == WaitStatus::pulsed);  // deletions are changes too
}

TEST_CASE("integer ops pulse like writes") {
  Fixture f;
  REQUIRE(f.kv.set_i64("events", 0) == KvStatus::ok);
  auto w = Watcher::create(f.arena);
  REQUIRE(w);
  REQUIRE(w->subscribe_key("events"));
  std::uint64_t r = 0;
  REQUIRE(f.kv.atomic("events", AtomicOp::add, 1, r) == KvStatus::ok);
  CHECK(w->wait(kShort) == WaitStatus::pulsed);
}

TEST_CASE("a Bloom false positive is dropped by the exact label check") {
  Fixture f;
  const std::uint64_t target = label_mask("adc");
  std::string impostor;
  for (int i = 0; i < 2'000'000 && impostor.empty(); ++i) {
    const std::string candidate = "x" + std::to_string(i);
    if ((label_mask(candidate) & target) == target) impostor = candidate;
  }
  REQUIRE_FALSE(impostor.empty());
  const std::vector<std::string> labels{impostor};
  REQUIRE(set_labels(f.arena, "decoy", labels));
  auto w = Watcher::create(f.arena);
  REQUIRE(w);
  REQUIRE(w->subscribe_label("adc"));
  REQUIRE(f.kv.set_i64("decoy", 1) == KvStatus::ok);
  CHECK(w->wait(kShort) == WaitStatus::timed_out);
}

TEST_CASE("a pulse with no sleeping watcher makes no system call") {
  Fixture f;
  auto w = Watcher::create(f.arena);
  REQUIRE(w);
  REQUIRE(w->subscribe_key("k"));
  const std::uint64_t before = f.arena.header().wake_syscalls.load();
  for (int i = 0; i < 1000; ++i) REQUIRE(f.kv.set_i64("k", i) == KvStatus::ok);
  CHECK(f.arena.header().wake_syscalls.load() == before);
  CHECK(w->wait(kShort) == WaitStatus::pulsed);  // the pulses were kept all the same
}

TEST_CASE("every watcher of a group wakes on one write") {
  Fixture f;
  constexpr int kWatchers = 4;
  std::atomic<int> ready{0}, woke{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kWatchers; ++i) {
    threads.emplace_back([&] {
      auto w = Watcher::create(f.arena);
      REQUIRE(w);
      REQUIRE(w->subscribe_key("go"));
      ready.fetch_add(1);
      if (w->wait(kLong) == WaitStatus::pulsed) woke.fetch_add(1);
    });
  }
  while (ready.load() < kWatchers) std::this_thread::sleep_for(1ms);
  std::this_thread::sleep_for(20ms);
  REQUIRE(f.kv.set_i64("go", 1) == KvStatus::ok);
  for (auto& t : threads) t.join();
  CHECK(woke.load() == kWatchers);
}

TEST_CASE("waiting on several groups wakes on any of them") {
  Fixture f;
  auto w = Watcher::create(f.arena);
  REQUIRE(w);
  REQUIRE(w->subscribe_key("a"));
  REQUIRE(w->subscribe_key("b"));
  std::thread writer([&] {
    std::this_thread::sleep_for(20ms);
    CHECK(f.kv.set_i64("b", 2) == KvStatus::ok);
  });
  CHECK(w->wait(kLong) == WaitStatus::pulsed);
  writer.join();
}

TEST_CASE("adaptive waiting spins first and still sleeps when nothing comes") {
  Fixture f;
  auto w = Watcher::create(f.arena);
  REQUIRE(w);
  REQUIRE(w->subscribe_key("spin"));
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(w->wait(kShort, 5'000'000) == WaitStatus::timed_out);
  CHECK(std::chrono::steady_clock::now() - t0 >= 45ms);
  std::thread writer([&] { CHECK(f.kv.set_i64("spin", 1) == KvStatus::ok); });
  CHECK(w->wait(kLong, 100'000'000) == WaitStatus::pulsed);
  writer.join();
}

TEST_CASE("a watcher that falls behind the change log is told how many changes it lost") {
  Fixture f;
  auto w = Watcher::create(f.arena);
  REQUIRE(w);
  REQUIRE(w->subscribe_key("busy"));
  const int writes = static_cast<int>(Fixture::options().group_log_entries) + 36;
  for (int i = 0; i < writes; ++i) REQUIRE(f.kv.set_i64("busy", i) == KvStatus::ok);
  int seen = 0;
  const std::uint64_t lost = w->drain([&](const Change&) { ++seen; });
  CHECK(lost == 36);
  CHECK(seen == static_cast<int>(Fixture::options().group_log_entries));
}

TEST_CASE("the group table refuses a 65th group with a clear error and frees unused groups") {
  Fixture f;
  std::vector<Watcher> watchers;
  auto w = Watcher::create(f.arena);
  REQUIRE(w);
  for (std::uint32_t i = 0; i < kGroupCount; ++i) REQUIRE(w->subscribe_key("k" + std::to_string(i)));
  auto extra = w->subscribe_key("one.too.many");
  REQUIRE_FALSE(extra);
  CHECK(extra.error().what.find("table is full") != std::string::npos);
  CHECK(GroupTable(f.arena).list().size() == kGroupCount);
  { auto moved = std::move(*w); }  // destroyed: its subscriptions go
  CHECK(GroupTable(f.arena).list().empty());
}

TEST_CASE("labels that no group watches cost nothing and wake nobody") {
  Fixture f;
  const std::vector<std::string> labels{"nobody-listens"};
  REQUIRE(set_labels(f.arena, "quiet", labels));
  const std::uint64_t before = f.arena.header().wake_syscalls.load();
  REQUIRE(f.kv.set_i64("quiet", 1) == KvStatus::ok);
  CHECK(f.arena.header().wake_syscalls.load() == before);
  auto bad = set_labels(f.arena, "quiet", std::vector<std::string>{std::string(100, 'l')});
  CHECK_FALSE(bad);
}

}  // TEST_SUITE

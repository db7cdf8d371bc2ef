// Signal groups across real processes: one write wakes every sleeping watcher.
#include <doctest/doctest.h>

#include <vector>

#include "proc_util.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/signals.hpp"

using namespace weir::core;
using namespace weir::test;

TEST_SUITE("integration.signals") {

TEST_CASE("one write wakes every watcher of its group in every process") {
  ArenaGuard guard(unique_name("sig-many"));
  ArenaOptions options;
  options.vector_dim = 0;
  auto arena = Arena::create(guard.where(), options);
  REQUIRE(arena);
  constexpr int kWatchers = 4;
  std::vector<Child> children;
  for (int i = 0; i < kWatchers; ++i) {
    children.push_back(Child::spawn([&](ChildLink& link) {
      auto watcher = Watcher::create(*arena);
      if (!watcher || !watcher->subscribe_key("go")) return 1;
      link.ready();
      return watcher->wait(10'000'000'000) == WaitStatus::pulsed ? 0 : 2;  // sleeps: no polling
    }));
    REQUIRE(children.back().valid());
  }
  for (auto& c : children) REQUIRE(c.wait_ready(milliseconds(10'000)));
  // Every child is subscribed; wait until all of them are asleep on the group.
  const auto deadline = Clock::now() + milliseconds(5'000);
  for (;;) {
    std::uint64_t sleeping = 0;
    for (const auto& g : GroupTable(*arena).list()) sleeping = g.waiters;
    if (__builtin_popcountll(sleeping) == kWatchers || Clock::now() > deadline) break;
    std::this_thread::sleep_for(milliseconds(1));
  }
  KvStore kv(*arena);
  const std::uint64_t syscalls_before = arena->header().wake_syscalls.load();
  REQUIRE(kv.set_i64("go", 1) == KvStatus::ok);
  for (auto& c : children) {
    const ExitStatus e = c.wait(milliseconds(5'000));
    CHECK(e.exited);
    CHECK(e.code == 0);
  }
  CHECK(arena->header().wake_syscalls.load() - syscalls_before == kWatchers);  // one FUTEX_WAKE per sleeper
}

TEST_CASE("a watcher killed while asleep stops costing publishes a syscall within 64 of them") {
  ArenaGuard guard(unique_name("sig-dead"));
  ArenaOptions options;
  options.vector_dim = 0;
  auto arena = Arena::create(guard.where(), options);
  REQUIRE(arena);
  Child child = Child::spawn([&](ChildLink& link) {
    auto watcher = Watcher::create(*arena);
    if (!watcher || !watcher->subscribe_key("go")) return 1;
    link.ready();
    (void)watcher->wait(60'000'000'000);
    return 0;
  });
  REQUIRE(child.valid());
  REQUIRE(child.wait_ready(milliseconds(10'000)));
  const auto waiters = [&] {
    std::uint64_t bits = 0;
    for (const auto& g : GroupTable(*arena).list()) bits |= g.waiters;
    return bits;
  };
  const auto deadline = Clock::now() + milliseconds(5'000);
  while (waiters() == 0 && Clock::now() < deadline) std::this_thread::sleep_for(milliseconds(1));
  REQUIRE(waiters() != 0);
  child.kill_now();  // killed asleep: its waiter bit stays behind
  KvStore kv(*arena);
  for (int i = 0; i < 64; ++i) REQUIRE(kv.set_i64("go", i) == KvStatus::ok);  // one of them looks it up
  CHECK(waiters() == 0);
  const std::uint64_t before = arena->header().wake_syscalls.load();
  for (int i = 0; i < 10; ++i) REQUIRE(kv.set_i64("go", i) == KvStatus::ok);
  CHECK(arena->header().wake_syscalls.load() == before);
}

}  // TEST_SUITE

#include <doctest/doctest.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <thread>

#include "arena_guard.hpp"
#include "weir/core/event_bridge.hpp"
#include "weir/core/kv_store.hpp"

using namespace weir::core;
using weir::test::ArenaGuard;
using weir::test::unique_name;

TEST_SUITE("core.event_bridge") {

TEST_CASE("an epoll loop sees the bridge's eventfd turn readable when a watched group pulses") {
  ArenaGuard guard(unique_name("bridge"));
  ArenaOptions options;
  options.vector_dim = 0;
  auto arena = Arena::create(guard.where(), options);
  REQUIRE(arena);
  auto watcher = Watcher::create(*arena);
  REQUIRE(watcher);
  REQUIRE(watcher->subscribe_key("a"));
  REQUIRE(watcher->subscribe_key("b"));
  auto bridge = EventBridge::start(*watcher);
  REQUIRE(bridge);
  const int ep = epoll_create1(EPOLL_CLOEXEC);
  REQUIRE(ep >= 0);
  epoll_event ev{};
  ev.events = EPOLLIN;
  REQUIRE(epoll_ctl(ep, EPOLL_CTL_ADD, (*bridge)->fd(), &ev) == 0);
  epoll_event out{};
  CHECK(epoll_wait(ep, &out, 1, 50) == 0);  // nothing yet

  KvStore kv(*arena);
  for (const char* key : {"b", "a"}) {
    std::thread writer([&] { CHECK(kv.set_i64(key, 1) == KvStatus::ok); });
    CHECK(epoll_wait(ep, &out, 1, 5000) == 1);
    writer.join();
    CHECK((*bridge)->consume() >= 1);
    int changes = 0;
    CHECK(watcher->drain([&](const Change&) { ++changes; }) == 0);
    CHECK(changes == 1);
  }
  CHECK(epoll_wait(ep, &out, 1, 50) == 0);  // consumed: quiet again
  ::close(ep);
}

}  // TEST_SUITE

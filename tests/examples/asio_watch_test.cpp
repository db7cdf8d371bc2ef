// Runs the weir_asio_watch example as a child process and writes the keys it watches from here.
#include <doctest/doctest.h>

#include <signal.h>

#include <chrono>
#include <string>
#include <vector>

#include "live_arena.hpp"
#include "spawn.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/signals.hpp"

namespace {

using namespace std::chrono_literals;
using weir::test::contains;

constexpr auto kStepTimeout = 5s;  // bound on each wait for the child

// The example with stdout and stderr in temp files; killed and reaped by the destructor if a failed
// check leaves it running.
weir::test::CapturedProcess start_example(const std::vector<std::string>& args) {
  weir::test::CapturedProcess child(weir::test::command(WEIR_ASIO_WATCH_PATH, args));
  REQUIRE(child.valid());
  return child;
}

}  // namespace

TEST_SUITE("examples.asio_watch") {

TEST_CASE("asio_watch prints each watched key's new value and exits 0 at --count") {
  weir::test::ScratchArena scratch("asiotest");
  weir::core::KvStore kv(scratch.arena());
  auto child = start_example({scratch.name(), "temp", "pressure", "--count", "3"});
  REQUIRE(weir::test::watcher_asleep(scratch.arena(), "pressure"));

  REQUIRE(kv.set_f64("temp", 1.5) == weir::core::KvStatus::ok);
  REQUIRE(kv.set_i64("other", 9) == weir::core::KvStatus::ok);  // not watched
  REQUIRE(kv.set_text("pressure", "high") == weir::core::KvStatus::ok);
  REQUIRE(kv.set_u64("pressure", 7) == weir::core::KvStatus::ok);

  CHECK(child.wait_exit(kStepTimeout) == 0);
  const std::string out = child.out();
  CHECK(contains(out, "temp = 1.5\n"));
  CHECK(contains(out, "pressure = "));
  CHECK_FALSE(contains(out, "other"));
  CHECK(child.err().empty());
}

TEST_CASE("asio_watch reports a deleted key") {
  weir::test::ScratchArena scratch("asiotest");
  weir::core::KvStore kv(scratch.arena());
  REQUIRE(kv.set_i64("temp", 1) == weir::core::KvStatus::ok);
  auto child = start_example({scratch.name(), "temp", "--count", "1"});
  REQUIRE(weir::test::watcher_asleep(scratch.arena(), "temp"));
  REQUIRE(kv.del("temp") == weir::core::KvStatus::ok);
  CHECK(child.wait_exit(kStepTimeout) == 0);
  CHECK(contains(child.out(), "temp = (not_found)\n"));
}

TEST_CASE("asio_watch exits 1 when its timer fires before --count changes") {
  weir::test::ScratchArena scratch("asiotest");
  auto child = start_example({scratch.name(), "temp", "--count", "1", "--seconds", "1"});
  CHECK(child.wait_exit(kStepTimeout) == 1);
  CHECK(contains(child.err(), "timed out after 1 s with 0 of 1 changes"));
}

TEST_CASE("asio_watch stops on SIGTERM and releases its subscription") {
  weir::test::ScratchArena scratch("asiotest");
  auto child = start_example({scratch.name(), "temp"});
  REQUIRE(weir::test::watcher_asleep(scratch.arena(), "temp"));
  REQUIRE(::kill(child.pid(), SIGTERM) == 0);
  CHECK(child.wait_exit(kStepTimeout) == 0);
  CHECK(weir::core::GroupTable(scratch.arena()).list().empty());
}

TEST_CASE("asio_watch refuses a bad command line and a missing arena") {
  auto usage = start_example({"only-a-name"});
  CHECK(usage.wait_exit(kStepTimeout) == 2);
  auto missing = start_example({"no-such-arena-asiotest", "temp"});
  CHECK(missing.wait_exit(kStepTimeout) == 1);
  CHECK(contains(missing.err(), "no-such-arena-asiotest"));
}

}  // TEST_SUITE

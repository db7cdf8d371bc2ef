// Vector writes pulse the signal groups of their key like KV writes: a follower of a vector
// partition (a label) hears every vector set and every delete of the partition's keys.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "arena_guard.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/signals.hpp"
#include "weir/core/vector_store.hpp"

using namespace weir::core;
using weir::test::ArenaGuard;
using weir::test::unique_name;
using namespace std::chrono_literals;

namespace {

constexpr std::uint32_t kDim = 8;
constexpr std::int64_t kLong = 5'000'000'000;  // a wait that must end by a pulse, not by this
constexpr std::int64_t kShort = 50'000'000;    // a wait expected to time out

struct Fixture {
  Fixture()
      : guard(unique_name("vsig")),
        arena(std::move(Arena::create(guard.where(), {.slot_count = 256, .value_bytes = 64, .vector_dim = kDim,
                                                      .group_log_entries = 64})
                            .value())),
        kv(arena),
        vs(arena) {}
  KeyHandle handle(std::string_view key) {
    KeyHandle h;
    REQUIRE(kv.resolve(key, h) == KvStatus::ok);
    return h;
  }
  void label(std::string_view key, const std::string& part) {
    const std::vector<std::string> labels{part};
    REQUIRE(set_labels(arena, key, labels));
  }
  ArenaGuard guard;
  Arena arena;
  KvStore kv;
  VectorStore vs;
};

std::vector<float> vec(float x) { return std::vector<float>(kDim, x); }

std::vector<Change> drain(Watcher& w) {
  std::vector<Change> changes;
  CHECK(w.drain([&](const Change& c) { changes.push_back(c); }) == 0);
  return changes;
}

void check_one(const std::vector<Change>& changes, KeyHandle h) {
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].slot == h.slot);
  CHECK(changes[0].generation == h.generation);
  CHECK_FALSE(changes[0].channel);
}

}  // namespace

TEST_SUITE("core.vector_signals") {

TEST_CASE("a vector set of a labelled key wakes a watcher of the label, with the key's slot and generation") {
  Fixture f;
  f.label("pulses/0", "pulses");  // labels first: the subscription leaves the slot's group cache stale
  const KeyHandle h = f.handle("pulses/0");
  auto w = Watcher::create(f.arena);
  REQUIRE(w);
  REQUIRE(w->subscribe_label("pulses"));
  CHECK(w->wait(kShort) == WaitStatus::timed_out);
  std::thread writer([&] {
    std::this_thread::sleep_for(20ms);
    CHECK(f.vs.set("pulses/0", vec(1.0F)) == VectorStatus::ok);
  });
  CHECK(w->wait(kLong) == WaitStatus::pulsed);
  writer.join();
  check_one(drain(*w), h);
  std::vector<float> out(kDim);
  REQUIRE(f.vs.get(h, out) == VectorStatus::ok);  // published after the row's release
  CHECK(out == vec(1.0F));

  // Every overload publishes.
  REQUIRE(f.vs.set(h, vec(2.0F)) == VectorStatus::ok);
  REQUIRE(f.vs.set_wait("pulses/0", vec(3.0F)) == VectorStatus::ok);
  CHECK(w->wait(kShort) == WaitStatus::pulsed);
  const std::vector<Change> two = drain(*w);
  REQUIRE(two.size() == 2);
  for (const Change& c : two) CHECK((c.slot == h.slot && c.generation == h.generation));
}

TEST_CASE("a label given after the watcher subscribed is heard at the first vector set") {
  Fixture f;
  auto w = Watcher::create(f.arena);
  REQUIRE(w);
  REQUIRE(w->subscribe_label("pulses"));
  REQUIRE(f.vs.set("pulses/1", vec(1.0F)) == VectorStatus::ok);  // not labelled yet
  CHECK(w->wait(kShort) == WaitStatus::timed_out);
  f.label("pulses/1", "pulses");
  REQUIRE(f.vs.set("pulses/1", vec(2.0F)) == VectorStatus::ok);
  CHECK(w->wait(kShort) == WaitStatus::pulsed);
  check_one(drain(*w), f.handle("pulses/1"));
}

TEST_CASE("a delete of a labelled key is logged too, and a re-insert under a new generation") {
  Fixture f;
  f.label("pulses/2", "pulses");
  auto w = Watcher::create(f.arena);
  REQUIRE(w);
  REQUIRE(w->subscribe_label("pulses"));
  REQUIRE(f.vs.set("pulses/2", vec(1.0F)) == VectorStatus::ok);
  const KeyHandle h = f.handle("pulses/2");
  REQUIRE(f.kv.del("pulses/2") == KvStatus::ok);
  CHECK(w->wait(kShort) == WaitStatus::pulsed);
  const std::vector<Change> changes = drain(*w);
  REQUIRE(changes.size() == 2);  // the set, then the delete
  for (const Change& c : changes) CHECK((c.slot == h.slot && c.generation == h.generation));
  // A re-inserted key has only its own name until labelled again: its vector sets are not heard.
  REQUIRE(f.vs.set("pulses/2", vec(2.0F)) == VectorStatus::ok);
  CHECK(w->wait(kShort) == WaitStatus::timed_out);
  CHECK(drain(*w).empty());
}

TEST_CASE("a vector set of a key without the label does not wake the watcher nor pulse its group") {
  Fixture f;
  f.label("pulses/3", "pulses");
  f.label("noise/0", "noise");
  auto w = Watcher::create(f.arena);
  REQUIRE(w);
  const auto group = w->subscribe_label("pulses");
  REQUIRE(group);
  const std::uint64_t before = f.arena.header().wake_syscalls.load();
  for (int i = 0; i < 100; ++i) {
    REQUIRE(f.vs.set("noise/0", vec(static_cast<float>(i))) == VectorStatus::ok);
    REQUIRE(f.vs.set("plain/" + std::to_string(i % 4), vec(1.0F)) == VectorStatus::ok);
  }
  CHECK(w->wait(kShort) == WaitStatus::timed_out);
  CHECK(drain(*w).empty());
  CHECK(f.arena.header().wake_syscalls.load() == before);
  for (const GroupInfo& g : GroupTable(f.arena).list())
    if (g.index == *group) CHECK(g.pulses == 0);
}

TEST_CASE("a key subscription hears vector sets of that key, also when the group is newer than the slot's cache") {
  Fixture f;
  REQUIRE(f.vs.set("probe", vec(1.0F)) == VectorStatus::ok);
  REQUIRE(f.vs.set("probe2", vec(1.0F)) == VectorStatus::ok);
  auto w = Watcher::create(f.arena);
  REQUIRE(w);
  REQUIRE(w->subscribe_key("probe"));  // the table changed: both slots' caches are stale now
  REQUIRE(f.vs.set("probe2", vec(2.0F)) == VectorStatus::ok);
  CHECK(w->wait(kShort) == WaitStatus::timed_out);
  REQUIRE(f.vs.set("probe", vec(2.0F)) == VectorStatus::ok);
  CHECK(w->wait(kShort) == WaitStatus::pulsed);
  check_one(drain(*w), f.handle("probe"));
}

TEST_CASE("another process's vector sets wake a watcher of the partition") {
  Fixture f;
  for (int i = 0; i < 4; ++i) f.label("pulses/p" + std::to_string(i), "pulses");
  auto w = Watcher::create(f.arena);
  REQUIRE(w);
  REQUIRE(w->subscribe_label("pulses"));
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    auto arena = Arena::open(f.guard.where());
    if (!arena) _exit(2);
    VectorStore vs(*arena);
    usleep(20'000);
    for (int i = 0; i < 4; ++i)
      if (vs.set_wait("pulses/p" + std::to_string(i), vec(static_cast<float>(i + 1))) != VectorStatus::ok) _exit(3);
    _exit(0);
  }
  std::vector<Change> seen;
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (seen.size() < 4 && std::chrono::steady_clock::now() < deadline) {
    if (w->wait(kLong) == WaitStatus::pulsed) w->drain([&](const Change& c) { seen.push_back(c); });
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  REQUIRE(seen.size() == 4);
  for (int i = 0; i < 4; ++i) {
    const KeyHandle h = f.handle("pulses/p" + std::to_string(i));
    CHECK(seen[static_cast<std::size_t>(i)].slot == h.slot);
    std::vector<float> out(kDim);
    REQUIRE(f.vs.get(h, out) == VectorStatus::ok);
    CHECK(out == vec(static_cast<float>(i + 1)));
  }
}

}  // TEST_SUITE

// Who holds an arena: the attach table across processes, stale arenas left by dead creators,
// another user's attach, and creators racing for one name.
#include <doctest/doctest.h>
#include <grp.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "proc_util.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/kv_store.hpp"

using namespace weir::core;
using namespace weir::test;

namespace {

constexpr std::uint32_t kNobody = 65534;     // uid and gid of nobody / nogroup on Debian
constexpr int kCannotSwitchUser = 77;       // a child that could not become nobody
constexpr std::uint64_t kOpened = 1000;      // report value: the open succeeded
constexpr int kCreators = 8;
constexpr int kCreatorRounds = 10;

bool contains(const std::vector<std::uint32_t>& pids, pid_t pid) {
  return std::find(pids.begin(), pids.end(), static_cast<std::uint32_t>(pid)) != pids.end();
}

bool mentions(const std::string& text, const std::string& word) { return text.find(word) != std::string::npos; }

// A child that opens the arena by name, says ready, then holds it until killed.
Child spawn_holder(const std::string& where) {
  return Child::spawn([where](ChildLink& link) {
    auto mine = Arena::open(where);
    if (!mine) return 1;
    link.ready();
    for (;;) pause();
    return 0;
  });
}

std::uint64_t open_outcome(const Result<Arena>& r) {
  return r ? kOpened : static_cast<std::uint64_t>(r.error().code);
}

}  // namespace

TEST_SUITE("integration.attach") {

TEST_CASE("a process that opens the arena is in the attach table until it dies") {
  ArenaGuard guard(unique_name("attach"));
  auto arena = Arena::create(guard.where());
  REQUIRE(arena);
  Child holder = spawn_holder(guard.where());
  REQUIRE(holder.valid());
  REQUIRE(holder.wait_ready(milliseconds(5000)));

  const auto pids = attached_pids(*arena);
  CHECK(contains(pids, holder.pid()));
  CHECK(contains(pids, getpid()));
  auto status = inspect(guard.where());
  REQUIRE(status);
  CHECK(contains(status->attached, holder.pid()));
  CHECK(status->creator_pid == static_cast<std::uint32_t>(getpid()));
  CHECK(status->creator_alive);
  CHECK_FALSE(status->stale);

  const pid_t gone = holder.pid();
  REQUIRE(holder.kill_now().signal == SIGKILL);
  CHECK_FALSE(contains(attached_pids(*arena), gone));
  CHECK(contains(attached_pids(*arena), getpid()));

  SUBCASE("a forked child closing its inherited copy leaves the parent's row alone") {
    Child forked = Child::spawn([&](ChildLink&) {
      arena->close();
      return 0;
    });
    REQUIRE(forked.valid());
    CHECK(forked.wait().code == 0);
    CHECK(contains(attached_pids(*arena), getpid()));
  }
}

TEST_CASE("an arena whose creator died and that nobody holds is stale, and only replace_stale creates over it") {
  ArenaGuard guard(unique_name("stale"));
  pid_t creator_pid = -1;

  SUBCASE("the creator exits after closing it") {
    Child creator = Child::spawn([&](ChildLink&) {
      auto mine = Arena::create(guard.where());
      return mine ? 0 : 1;
    });
    REQUIRE(creator.valid());
    creator_pid = creator.pid();
    const ExitStatus e = creator.wait();
    REQUIRE(e.exited);
    REQUIRE(e.code == 0);
  }
  SUBCASE("the creator is killed while holding it") {
    Child creator = Child::spawn([&](ChildLink& link) {
      auto mine = Arena::create(guard.where());
      if (!mine) return 1;
      link.ready();
      for (;;) pause();
      return 0;
    });
    REQUIRE(creator.valid());
    creator_pid = creator.pid();
    REQUIRE(creator.wait_ready(milliseconds(5000)));
    REQUIRE(creator.kill_now().signal == SIGKILL);
  }

  auto status = inspect(guard.where());
  REQUIRE(status);
  CHECK(status->creator_pid == static_cast<std::uint32_t>(creator_pid));
  CHECK_FALSE(status->creator_alive);
  CHECK(status->attached.empty());
  CHECK(status->stale);

  auto again = Arena::create(guard.where());
  REQUIRE_FALSE(again);
  CHECK(again.error().code == Errc::already_exists);
  CHECK_MESSAGE(mentions(again.error().what, "stale"), again.error().what);

  ArenaOptions replace;
  replace.replace_stale = true;
  auto replaced = Arena::create(guard.where(), replace);
  REQUIRE_MESSAGE(replaced, (replaced ? "" : replaced.error().what));
  CHECK(replaced->header().creator_pid == static_cast<std::uint32_t>(getpid()));
  auto after = inspect(guard.where());
  REQUIRE(after);
  CHECK_FALSE(after->stale);
  CHECK(after->creator_alive);
}

TEST_CASE("an arena held by a live process is not stale after its creator dies") {
  ArenaGuard guard(unique_name("held"));
  StartGate creator_may_exit;
  REQUIRE(creator_may_exit.valid());
  Child creator = Child::spawn([&](ChildLink& link) {
    auto mine = Arena::create(guard.where());
    if (!mine) return 1;
    link.ready();
    return creator_may_exit.pass() ? 0 : 2;
  });
  REQUIRE(creator.valid());
  REQUIRE(creator.wait_ready(milliseconds(5000)));
  Child holder = spawn_holder(guard.where());
  REQUIRE(holder.valid());
  REQUIRE(holder.wait_ready(milliseconds(5000)));
  creator_may_exit.open(1);
  const ExitStatus e = creator.wait();
  REQUIRE(e.exited);
  REQUIRE(e.code == 0);

  auto status = inspect(guard.where());
  REQUIRE(status);
  CHECK_FALSE(status->creator_alive);
  CHECK(contains(status->attached, holder.pid()));
  CHECK_FALSE(status->stale);

  ArenaOptions replace;
  replace.replace_stale = true;
  auto over = Arena::create(guard.where(), replace);
  REQUIRE_FALSE(over);
  CHECK(over.error().code == Errc::already_exists);
  CHECK_MESSAGE(mentions(over.error().what, "in use"), over.error().what);
  CHECK_MESSAGE(mentions(over.error().what, std::to_string(holder.pid())), over.error().what);

  REQUIRE(holder.kill_now().signal == SIGKILL);
  auto later = inspect(guard.where());
  REQUIRE(later);
  CHECK(later->stale);
}

TEST_CASE("creating over an arena whose creator is alive fails as in use, from any process") {
  ArenaGuard guard(unique_name("inuse"));
  auto arena = Arena::create(guard.where());
  REQUIRE(arena);

  Child rival = Child::spawn([&](ChildLink& link) {
    ArenaOptions replace;
    replace.replace_stale = true;
    auto mine = Arena::create(guard.where(), replace);
    link.report[0] = mine ? kOpened : static_cast<std::uint64_t>(mine.error().code);
    link.report[1] = !mine && mentions(mine.error().what, "in use") ? 1 : 0;
    return 0;
  });
  REQUIRE(rival.valid());
  Report r{};
  REQUIRE(rival.read_report(r, milliseconds(10'000)));
  CHECK(rival.wait().code == 0);
  CHECK(r[0] == static_cast<std::uint64_t>(Errc::already_exists));
  CHECK(r[1] == 1);
  auto status = inspect(guard.where());
  REQUIRE(status);
  CHECK_FALSE(status->stale);
  CHECK(status->creator_alive);
  CHECK(arena->header().creator_pid == static_cast<std::uint32_t>(getpid()));  // still ours, untouched
}

TEST_CASE("another user cannot attach to a 0600 arena") {
  if (geteuid() != 0) {
    MESSAGE("skipped: switching to another user needs root");
    return;
  }
  ArenaGuard guard(unique_name("perm"));
  ArenaOptions options;
  bool group_access = false;
  SUBCASE("owner only") { options.mode = 0600; }
  SUBCASE("a 0660 arena whose group is the other user's opens for it") {
    options.mode = 0660;
    group_access = true;
  }
  auto arena = Arena::create(guard.where(), options);
  REQUIRE(arena);
  if (group_access) REQUIRE(fchown(arena->fd(), static_cast<uid_t>(-1), static_cast<gid_t>(kNobody)) == 0);

  Child other = Child::spawn([&](ChildLink& link) {
    if (setgroups(0, nullptr) != 0 || setgid(kNobody) != 0 || setuid(kNobody) != 0) return kCannotSwitchUser;
    {
      auto rw = Arena::open(guard.where());
      link.report[0] = open_outcome(rw);
      if (rw) link.report[2] = KvStore(*rw).set_text("from.nobody", "hi") == KvStatus::ok ? 1 : 0;
    }
    OpenOptions ro;
    ro.read_only = true;
    link.report[1] = open_outcome(Arena::open(guard.where(), ro));
    return 0;
  });
  REQUIRE(other.valid());
  Report r{};
  const bool reported = other.read_report(r, milliseconds(10'000));
  const ExitStatus e = other.wait();
  if (e.exited && e.code == kCannotSwitchUser) {
    MESSAGE("skipped: could not switch to uid " << kNobody);
    return;
  }
  REQUIRE(reported);
  CHECK(e.code == 0);
  if (group_access) {
    CHECK(r[0] == kOpened);
    CHECK(r[1] == kOpened);
    CHECK(r[2] == 1);
  } else {
    CHECK(r[0] == static_cast<std::uint64_t>(Errc::permission_denied));
    CHECK(r[1] == static_cast<std::uint64_t>(Errc::permission_denied));
  }
}

TEST_CASE("of several processes creating the same arena at once exactly one succeeds" * doctest::timeout(60)) {
  for (int round = 0; round < kCreatorRounds; ++round) {
    CAPTURE(round);
    ArenaGuard guard(unique_name("race"));
    StartGate go, may_exit;
    REQUIRE(go.valid());
    REQUIRE(may_exit.valid());
    std::vector<Child> creators;
    for (int c = 0; c < kCreators; ++c) {
      creators.push_back(Child::spawn([&](ChildLink& link) {
        if (!go.pass()) return 2;
        auto mine = Arena::create(guard.where());
        link.report[0] = mine ? kOpened : static_cast<std::uint64_t>(mine.error().code);
        if (mine) {
          // The winner's arena is whole: its header validates and its store works.
          KvStore kv(*mine);
          link.report[1] = kv.set_text("winner", std::to_string(getpid())) == KvStatus::ok ? 1 : 0;
        }
        link.ready();
        return may_exit.pass() ? 0 : 3;  // the winner holds its arena until every rival tried
      }));
      REQUIRE(creators.back().valid());
    }
    go.open(creators.size());
    for (auto& c : creators) REQUIRE(c.wait_ready(milliseconds(10'000)));
    may_exit.open(creators.size());

    int winners = 0, exists = 0, other = 0;
    pid_t winner = -1;
    for (auto& c : creators) {
      Report r{};
      REQUIRE(c.read_report(r, milliseconds(10'000)));
      const pid_t pid = c.pid();
      const ExitStatus e = c.wait();
      CHECK(e.exited);  // never a crash
      CHECK(e.code == 0);
      if (r[0] == kOpened) {
        ++winners;
        winner = pid;
        CHECK(r[1] == 1);
      } else if (r[0] == static_cast<std::uint64_t>(Errc::already_exists)) {
        ++exists;
      } else {
        ++other;
        MESSAGE("a rival failed with " << errc_name(static_cast<Errc>(r[0])));
      }
    }
    CHECK(winners == 1);
    CHECK(exists == kCreators - 1);
    CHECK(other == 0);

    auto opened = Arena::open(guard.where());
    REQUIRE_MESSAGE(opened, (opened ? "" : opened.error().what));
    CHECK(opened->header().creator_pid == static_cast<std::uint32_t>(winner));
    KvStore kv(*opened);
    std::string out(64, '\0');
    ValueInfo info;
    CHECK(kv.get("winner", {reinterpret_cast<std::byte*>(out.data()), out.size()}, info) == KvStatus::ok);
    out.resize(info.length);
    CHECK(out == std::to_string(winner));
  }
}

}  // TEST_SUITE

// The run state machine in the arena header: transitions, refusals naming the run, metadata
// limits, numbers that only grow, a holder killed mid-transition, and processes racing to start.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "arena_guard.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/clock.hpp"
#include "weir/core/run_control.hpp"

using namespace weir::core;

namespace {

RunNumberAllocator next_above() {
  return [](std::uint64_t highest) -> Result<std::uint64_t> { return highest + 1; };
}

}  // namespace

TEST_SUITE("core.run_control") {

TEST_CASE("a fresh arena is idle with no run; start, stop and abort move the state and keep the metadata") {
  weir::test::ArenaGuard guard(weir::test::unique_name("run"));
  auto arena = Arena::create(guard.where());
  REQUIRE(arena);
  RunControl rc(*arena);
  RunStatus s = rc.status();
  CHECK(s.state == RunState::idle);
  CHECK(s.number == 0);
  const std::int64_t before = realtime_ns();
  auto started = rc.start(RunMeta{"background", "A. Physicist", "empty can", "no beam"}, "cli", next_above());
  REQUIRE_MESSAGE(started, started.error().what);
  CHECK(started->state == RunState::running);
  CHECK(started->number == 1);
  CHECK(started->start_ns >= before);
  CHECK(started->meta.title == "background");
  CHECK(started->meta.operator_name == "A. Physicist");
  CHECK(started->door == "cli");

  auto again = rc.start(RunMeta{"data", "", "", ""}, "http", next_above());
  REQUIRE_FALSE(again);
  CHECK(again.error().code == Errc::conflict);
  CHECK_MESSAGE(again.error().what.find("run 1 (started by cli) is running") != std::string::npos, again.error().what);
  CHECK(rc.status().meta.title == "background");  // the running run is untouched

  auto wrong = rc.stop("http", RunEnd::stopped, 7);
  REQUIRE_FALSE(wrong);
  CHECK(wrong.error().what.find("run 1") != std::string::npos);

  auto stopped = rc.stop("http", RunEnd::stopped);
  REQUIRE(stopped);
  CHECK(stopped->state == RunState::idle);
  CHECK(stopped->ended == RunEnd::stopped);
  CHECK(stopped->stop_ns >= stopped->start_ns);
  CHECK(stopped->number == 1);

  auto idle_stop = rc.stop("cli", RunEnd::aborted);
  REQUIRE_FALSE(idle_stop);
  CHECK_MESSAGE(idle_stop.error().what.find("no run is running (run 1 was stopped by http)") != std::string::npos,
                idle_stop.error().what);

  REQUIRE(rc.start(RunMeta{}, "cli", next_above()));
  auto aborted = rc.stop("cli", RunEnd::aborted);
  REQUIRE(aborted);
  CHECK(aborted->number == 2);
  CHECK(aborted->ended == RunEnd::aborted);
  CHECK(aborted->transitions == 4);
}

TEST_CASE("run numbers only grow: an allocator's number at or below the highest is refused, and its failure too") {
  weir::test::ArenaGuard guard(weir::test::unique_name("run"));
  auto arena = Arena::create(guard.where());
  REQUIRE(arena);
  RunControl rc(*arena);
  REQUIRE(rc.start({}, "cli", [](std::uint64_t) -> Result<std::uint64_t> { return 40; }));
  REQUIRE(rc.stop("cli", RunEnd::stopped));
  auto reused = rc.start({}, "cli", [](std::uint64_t) -> Result<std::uint64_t> { return 40; });
  REQUIRE_FALSE(reused);
  CHECK(reused.error().what.find("run number 40 is not above the highest this arena has run (40)") != std::string::npos);
  auto failing = rc.start({}, "cli", [](std::uint64_t) -> Result<std::uint64_t> {
    return fail(Errc::io_error, "runs/x.run-numbers: disk full");
  });
  REQUIRE_FALSE(failing);
  CHECK(failing.error().what == "runs/x.run-numbers: disk full");
  CHECK(rc.status().state == RunState::idle);
  CHECK(rc.status().highest == 40);
}

TEST_CASE("metadata that is not UTF-8, holds control characters or is too long is refused naming the field") {
  CHECK(check_run_meta(RunMeta{"Ωmega run – ☢", "Zoë", "Fe₃O₄", "line one\nline two\tend"}));
  auto bad = check_run_meta(RunMeta{"ok", std::string("\xC3\x28"), "", ""});
  REQUIRE_FALSE(bad);
  CHECK(bad.error().what == "run operator: not UTF-8 text (a bad byte at offset 0)");
  auto overlong = check_run_meta(RunMeta{std::string("\xC0\xAF"), "", "", ""});  // an overlong '/'
  REQUIRE_FALSE(overlong);
  auto nul = check_run_meta(RunMeta{"", "", std::string("a\0b", 3), ""});
  REQUIRE_FALSE(nul);
  CHECK(nul.error().what == "run sample: a control character (0) at offset 1");
  auto longer = check_run_meta(RunMeta{"", "", "", std::string(kRunCommentBytes + 1, 'x')});
  REQUIRE_FALSE(longer);
  CHECK(longer.error().what == "run comment: 513 bytes, longer than the 512 bytes it may hold");
  CHECK(check_run_meta(RunMeta{std::string(kRunTitleBytes, 't'), "", "", ""}));
}

TEST_CASE("a transition whose holder was killed is taken over; a live holder is waited for, then named") {
  weir::test::ArenaGuard guard(weir::test::unique_name("run"));
  auto arena = Arena::create(guard.where());
  REQUIRE(arena);
  RunControl rc(*arena);
  RunControlBlock& block = arena->header().run;
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    block.word.store(epoch_claimed(0, static_cast<std::uint32_t>(getpid())));  // dies holding it
    _exit(0);
  }
  REQUIRE(waitpid(child, nullptr, 0) == child);
  auto started = rc.start({}, "cli", next_above());
  REQUIRE_MESSAGE(started, started.error().what);
  CHECK(started->number == 1);
}

TEST_CASE("a waiter wakes on a transition in another process; recorder rows say which run's files they closed") {
  weir::test::ArenaGuard guard(weir::test::unique_name("run"));
  auto arena = Arena::create(guard.where());
  REQUIRE(arena);
  RunControl rc(*arena);
  const std::uint32_t seen = rc.status().changes;
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    usleep(50'000);
    auto a = Arena::open(guard.where());
    if (!a) _exit(2);
    RunControl other(*a);
    _exit(other.start({}, "child", next_above()) ? 0 : 1);
  }
  const std::int64_t t0 = monotonic_ns();
  const std::uint32_t now = rc.wait(seen, 10 * kNsPerSecond);
  CHECK(now != seen);
  CHECK(monotonic_ns() - t0 < 5 * kNsPerSecond);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(rc.status().door == "child");

  auto row = rc.join_recorder();
  REQUIRE(row);
  rc.recorder_open(*row, 1, 123);
  auto rows = rc.recorders();
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].open_run == 1);
  CHECK(rows[0].alive);
  rc.recorder_closed(*row, 1);
  rows = rc.recorders();
  CHECK(rows[0].closed_run == 1);
  CHECK(rows[0].open_run == 0);
  rc.leave_recorder(*row);
  CHECK(rc.recorders().empty());
  // A timed-out wait returns the same counter, no sooner than asked.
  const std::uint32_t c = rc.status().changes;
  const std::int64_t t1 = monotonic_ns();
  CHECK(rc.wait(c, 20'000'000) == c);
  CHECK(monotonic_ns() - t1 >= 20'000'000);
}

TEST_CASE("four processes racing for 200 transitions: one run at a time, numbers strictly increasing, every refusal names a run") {
  weir::test::ArenaGuard guard(weir::test::unique_name("run"));
  auto arena = Arena::create(guard.where());
  REQUIRE(arena);
  constexpr int kProcs = 4, kTries = 50;
  std::vector<pid_t> kids;
  for (int p = 0; p < kProcs; ++p) {
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      auto a = Arena::open(guard.where());
      if (!a) _exit(10);
      RunControl rc(*a);
      std::uint64_t last_seen = 0;
      for (int i = 0; i < kTries; ++i) {
        if ((i + p) % 2 == 0) {
          auto s = rc.start({}, "p" + std::to_string(p), next_above());
          if (s) {
            if (s->number <= last_seen) _exit(11);  // numbers only grow, as this process sees them
            last_seen = s->number;
          } else if (s.error().what.find("start refused: run ") == std::string::npos) {
            _exit(12);
          }
        } else {
          auto s = rc.stop("p" + std::to_string(p), RunEnd::stopped);
          if (!s && s.error().what.find("refused: no run is running") == std::string::npos) _exit(13);
        }
      }
      _exit(0);
    }
    kids.push_back(child);
  }
  for (const pid_t k : kids) {
    int status = 0;
    REQUIRE(waitpid(k, &status, 0) == k);
    CHECK_MESSAGE(WEXITSTATUS(status) == 0, "child exit ", WEXITSTATUS(status));
  }
  RunControl rc(*arena);
  const RunStatus s = rc.status();
  // Each successful start was numbered one above the last: the highest number is the count of starts,
  // and every start but a final running one was followed by exactly one stop.
  const std::uint64_t starts = s.highest;
  const std::uint64_t stops = s.transitions - starts;
  CHECK(stops == (s.state == RunState::running ? starts - 1 : starts));
  CHECK(starts >= 1);
}

}  // TEST_SUITE

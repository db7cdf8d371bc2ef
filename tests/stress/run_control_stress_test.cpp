// The run control under threads (and TSan): four threads racing start and stop while two read the
// status without a pause. Every transition is serialized, every status read is consistent.
#include <doctest/doctest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "arena_guard.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/run_control.hpp"

using namespace weir::core;

TEST_SUITE("stress.run_control") {

TEST_CASE("four threads racing for 2000 transitions while two read the status: one run at a time, every read whole") {
  weir::test::ArenaGuard guard(weir::test::unique_name("runstress"));
  auto arena = Arena::create(guard.where());
  REQUIRE(arena);
  constexpr int kThreads = 4, kTries = 500;
  std::atomic<bool> done{false};
  std::atomic<int> torn{0}, refused_unnamed{0}, started{0};
  std::vector<std::thread> doors, readers;
  for (int r = 0; r < 2; ++r)
    readers.emplace_back([&] {
      RunControl rc(*arena);
      while (!done.load()) {
        const RunStatus s = rc.status();
        // A running run's title is the name of the door that started it: a read mixing two
        // transitions would pair one door's name with another's title.
        if (s.state == RunState::running && s.meta.title != s.door) ++torn;
        if (s.number > s.highest) ++torn;
      }
    });
  for (int t = 0; t < kThreads; ++t)
    doors.emplace_back([&, t] {
      RunControl rc(*arena);
      for (int i = 0; i < kTries; ++i) {
        if ((i + t) % 2 == 0) {
          const std::string door = "d" + std::to_string(t);
          auto s = rc.start(RunMeta{door, "", "", ""}, door, [&](std::uint64_t highest) -> Result<std::uint64_t> { return highest + 1; });
          if (s) {
            ++started;
            continue;
          }
          if (s.error().what.find("start refused: run ") == std::string::npos) ++refused_unnamed;
        } else {
          auto s = rc.stop("d" + std::to_string(t), RunEnd::stopped);
          // Refused naming the last run, or saying there has been none (a stop before the first start).
          if (!s && s.error().what.find("refused: no run is running (run ") == std::string::npos &&
              s.error().what.find("refused: no run is running (none has run in this arena)") == std::string::npos)
            ++refused_unnamed;
        }
      }
    });
  for (auto& d : doors) d.join();
  done.store(true);
  for (auto& r : readers) r.join();
  RunControl rc(*arena);
  const RunStatus s = rc.status();
  CHECK(refused_unnamed.load() == 0);
  CHECK(s.highest == static_cast<std::uint64_t>(started.load()));
  CHECK(s.transitions == static_cast<std::uint64_t>(started.load()) * 2 - (s.state == RunState::running ? 1 : 0));
  CHECK(torn.load() == 0);
}

}  // TEST_SUITE

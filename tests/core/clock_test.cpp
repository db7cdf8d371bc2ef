#include <doctest/doctest.h>

#include <atomic>
#include <thread>

#include "weir/core/clock.hpp"

using namespace weir::core;

TEST_SUITE("core.clock") {

TEST_CASE("the clocks read nanoseconds: monotonic never goes back, realtime is after 2020") {
  const std::int64_t a = monotonic_ns();
  const std::int64_t b = monotonic_ns();
  CHECK(b >= a);
  CHECK(realtime_ns() > 1'577'836'800LL * kNsPerSecond);  // 2020-01-01
}

TEST_CASE("sleep_until returns at the deadline, not before") {
  const std::int64_t start = monotonic_ns();
  std::atomic<bool> stop{false};
  SUBCASE("with a flag") { CHECK(sleep_until(start + 20'000'000, &stop, 5'000'000) == SleepStatus::deadline); }
  SUBCASE("without one") { CHECK(sleep_until(start + 20'000'000) == SleepStatus::deadline); }
  CHECK(monotonic_ns() - start >= 20'000'000);
}

TEST_CASE("a deadline already passed returns at once") {
  const std::int64_t start = monotonic_ns();
  CHECK(sleep_until(start - 1) == SleepStatus::deadline);
  CHECK(monotonic_ns() - start < 50'000'000);
}

TEST_CASE("sleep_until honours the stop flag within a slice") {
  std::atomic<bool> stop{false};
  SUBCASE("set before") {
    stop.store(true);
    CHECK(sleep_until(monotonic_ns() + 10 * kNsPerSecond, &stop) == SleepStatus::stopped);
  }
  SUBCASE("set while sleeping") {
    const std::int64_t start = monotonic_ns();
    std::thread setter([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      stop.store(true);
    });
    CHECK(sleep_until(start + 10 * kNsPerSecond, &stop, 5'000'000) == SleepStatus::stopped);
    setter.join();
    const std::int64_t took = monotonic_ns() - start;
    CHECK(took >= 20'000'000);
    CHECK(took < 2 * kNsPerSecond);  // one slice after the flag, with room for a loaded machine
  }
}

}  // TEST_SUITE

#include "weir/controls/driver_loop.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include <fmt/format.h>

namespace weir::controls {

namespace {

constexpr auto kCountersEvery = std::chrono::milliseconds(200);
constexpr std::size_t kNamesShown = 10;  // items named in the connection warning

}  // namespace

LoopEnd run_driver_loop(const DriverSettings& settings, std::size_t total, const char* items, DriverThread& driver,
                        const std::atomic<bool>& stop) {
  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  const auto flush_every = std::chrono::microseconds(static_cast<std::int64_t>(settings.flush_ms * 1000));
  auto next_flush = started + flush_every;
  auto next_counters = started;
  bool warned = false;
  // The tick: a block fills in log_block updates; at 20,000 updates/s and 256 a block that is 12.8 ms.
  const auto tick = std::min<Clock::duration>(flush_every, std::chrono::milliseconds(2));
  while (!stop.load(std::memory_order_relaxed)) {  // relaxed: a flag; nothing is read through it
    const auto now = Clock::now();
    if (settings.duration_s > 0 && now - started >= std::chrono::duration<double>(settings.duration_s)) break;
    const bool due = now >= next_flush;
    driver.flush(due);
    if (due) next_flush = now + flush_every;
    if (now >= next_counters) {
      driver.publish_counters();
      next_counters = now + kCountersEvery;
    }
    if (!warned && now - started > std::chrono::duration<double>(settings.connect_timeout_s)) {
      warned = true;
      std::string names;
      if (const std::size_t count = driver.not_connected(names, kNamesShown); count > 0)
        fmt::print(stderr, "driver \"{}\": {} of {} {} not connected after {} s (still waiting): {}{}\n",
                   settings.part, count, total, items, settings.connect_timeout_s, names, count > kNamesShown ? ", ..." : "");
    }
    std::this_thread::sleep_for(tick);
  }
  LoopEnd end;
  end.stopped = stop.load(std::memory_order_relaxed);
  end.elapsed_s = std::chrono::duration<double>(Clock::now() - started).count();
  return end;
}

}  // namespace weir::controls

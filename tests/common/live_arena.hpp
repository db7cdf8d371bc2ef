#pragma once
// For tests that run weir programs against a live arena: a scratch arena removed however the test
// ends, and a bounded wait until a watcher sleeps on a group (so no later write can be missed).
#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <thread>

#include "weir/core/arena.hpp"
#include "weir/core/signals.hpp"

namespace weir::test {

inline constexpr std::chrono::seconds kWatcherWait{5};               // bound on waiting for a watcher
inline constexpr std::chrono::milliseconds kWatcherPoll{5};          // between looks at the group table

/// A fresh arena for one test, created here and removed from /dev/shm however the test ends.
class ScratchArena {
 public:
  explicit ScratchArena(std::string_view prefix = "livetest") {
    static std::atomic<int> counter{0};
    name_ = std::string(prefix) + std::to_string(getpid()) + "n" + std::to_string(counter.fetch_add(1));
    auto arena = core::Arena::create(name_);
    REQUIRE(arena);
    arena_ = std::move(*arena);
  }
  ScratchArena(const ScratchArena&) = delete;
  ScratchArena& operator=(const ScratchArena&) = delete;
  ~ScratchArena() {
    arena_.close();
    std::error_code ignored;
    std::filesystem::remove("/dev/shm/weir." + name_, ignored);
  }
  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] const core::Arena& arena() const { return arena_; }

 private:
  std::string name_;
  core::Arena arena_;
};

/// Whether a group of that name has a subscriber asleep on it, within kWatcherWait. A sleeping
/// watcher has finished subscribing, so no write after this can be missed.
inline bool watcher_asleep(const core::Arena& arena, std::string_view group_name) {
  const auto deadline = std::chrono::steady_clock::now() + kWatcherWait;
  while (std::chrono::steady_clock::now() < deadline) {
    for (const core::GroupInfo& g : core::GroupTable(arena).list())
      if (g.name == group_name && g.subscribers > 0 && g.waiters != 0) return true;
    std::this_thread::sleep_for(kWatcherPoll);
  }
  return false;
}

}  // namespace weir::test

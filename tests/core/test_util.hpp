#pragma once
// Helpers for core tests: unique arena names and cleanup.
#include <unistd.h>

#include <atomic>
#include <string>

#include "weir/core/arena.hpp"

namespace weir::test {

/// A name no other test process uses: prefix + pid + counter.
inline std::string unique_name(const std::string& prefix) {
  static std::atomic<int> counter{0};
  return "t." + prefix + "." + std::to_string(getpid()) + "." + std::to_string(counter.fetch_add(1));
}

/// Removes an arena (shm name or file path) when the test ends, pass or fail.
class ArenaGuard {
 public:
  explicit ArenaGuard(std::string where) : where_(std::move(where)) {}
  ArenaGuard(const ArenaGuard&) = delete;
  ArenaGuard& operator=(const ArenaGuard&) = delete;
  ~ArenaGuard() { (void)core::Arena::remove(where_); }
  [[nodiscard]] const std::string& where() const noexcept { return where_; }

 private:
  std::string where_;
};

}  // namespace weir::test

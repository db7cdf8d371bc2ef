#pragma once
// Arena names for tests: unique per process and call, and removed however the test ends.
#include <unistd.h>

#include <atomic>
#include <string>
#include <string_view>

#include "weir/core/arena.hpp"

namespace weir::test {

/// A fresh arena name per call, unique across concurrent test runs: "t-TAG-PID-N". Thread: any.
inline std::string unique_name(std::string_view tag) {
  static std::atomic<int> serial{0};
  return "t-" + std::string(tag) + "-" + std::to_string(getpid()) + "-" + std::to_string(serial.fetch_add(1));
}

/// Removes the arena (shm name or file path) on construction (a leftover) and on destruction,
/// pass or fail. Thread: one.
class ArenaGuard {
 public:
  explicit ArenaGuard(std::string where) : where_(std::move(where)) { (void)core::Arena::remove(where_); }
  ~ArenaGuard() { (void)core::Arena::remove(where_); }
  ArenaGuard(const ArenaGuard&) = delete;
  ArenaGuard& operator=(const ArenaGuard&) = delete;
  [[nodiscard]] const std::string& where() const noexcept { return where_; }

 private:
  std::string where_;
};

}  // namespace weir::test

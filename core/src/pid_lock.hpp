#pragma once
// A cold-path lock in shared memory: a word holding the holder's pid. A lock whose holder died is
// taken over, so table edits must be single stores published last (a dead editor leaves no
// half-visible entry). Private to core.
#include <sched.h>

#include <atomic>
#include <cstdint>

#include "weir/core/arena.hpp"
#include "weir/core/detail/pid.hpp"

namespace weir::core::detail {

class PidLock {
 public:
  explicit PidLock(std::atomic<std::uint64_t>& word) noexcept : word_(word) {
    const std::uint64_t me = current_pid();
    for (int spins = 0;;) {
      std::uint64_t holder = 0;
      if (word_.compare_exchange_weak(holder, me, std::memory_order_acquire)) return;
      if (holder != 0 && !pid_alive(static_cast<std::uint32_t>(holder)) &&
          word_.compare_exchange_strong(holder, me, std::memory_order_acquire))
        return;  // its holder died mid-edit
      if (++spins > 64) sched_yield();
    }
  }
  ~PidLock() { word_.store(0, std::memory_order_release); }
  PidLock(const PidLock&) = delete;
  PidLock& operator=(const PidLock&) = delete;

 private:
  std::atomic<std::uint64_t>& word_;
};

}  // namespace weir::core::detail

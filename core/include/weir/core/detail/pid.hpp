#pragma once
// This process's pid, cached: glibc makes every getpid() a system call, and writers put their pid in
// every claim. A pthread_atfork handler clears the cache in a forked child.
#include <atomic>
#include <cstdint>

namespace weir::core::detail {

extern std::atomic<std::uint32_t> g_cached_pid;
/// Fills the cache (first use, or first use after fork). Thread: any.
std::uint32_t fill_pid_cache() noexcept;

inline std::uint32_t current_pid() noexcept {
  const std::uint32_t pid = g_cached_pid.load(std::memory_order_relaxed);  // a cache: any thread may fill it
  return pid != 0 ? pid : fill_pid_cache();
}

}  // namespace weir::core::detail

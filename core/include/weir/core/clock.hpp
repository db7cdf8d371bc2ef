#pragma once
// The clocks every module reads, and a paced sleep that a stop flag can cut short. CLOCK_MONOTONIC
// is for deadlines and durations; CLOCK_REALTIME only for stamps that people and files read.
#include <time.h>

#include <atomic>
#include <cstdint>

#include "weir/core/limits.hpp"

namespace weir::core {

inline constexpr std::int64_t kNsPerSecond = 1'000'000'000;
inline constexpr std::int64_t kNsPerMs = 1'000'000;

/// CLOCK_MONOTONIC in nanoseconds. Thread: any. Never fails (a vDSO read).
[[nodiscard]] inline std::int64_t monotonic_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * kNsPerSecond + ts.tv_nsec;
}

/// The CLOCK_MONOTONIC deadline of a wait of timeout_ns from now; 0 (do not wait) when timeout_ns <= 0.
[[nodiscard]] inline std::int64_t deadline_after(std::int64_t timeout_ns) noexcept {
  return timeout_ns <= 0 ? 0 : monotonic_ns() + timeout_ns;
}

/// CLOCK_REALTIME in nanoseconds since the Unix epoch. Thread: any. Never fails (a vDSO read).
[[nodiscard]] inline std::int64_t realtime_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return std::int64_t{ts.tv_sec} * kNsPerSecond + ts.tv_nsec;
}

enum class [[nodiscard]] SleepStatus : std::uint8_t {
  deadline = 0,  // monotonic_ns() reached the deadline
  stopped = 1,   // the stop flag was seen set first
};

/// Sleeps until monotonic_ns() >= deadline_ns, in slices of at most slice_ns, and looks at *stop
/// before each slice: a set flag ends the sleep within one slice. A deadline already passed returns
/// at once (after one look at the flag). A signal (EINTR) only cuts a slice short. stop may be null.
/// Thread: any. Requires: slice_ns > 0.
SleepStatus sleep_until(std::int64_t deadline_ns, const std::atomic<bool>* stop = nullptr,
                        std::int64_t slice_ns = kDefaultStopPollNs) noexcept;

}  // namespace weir::core

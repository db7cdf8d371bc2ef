// The paced sleep: absolute clock_nanosleep slices, so time lost to EINTR or scheduling never adds up.
#include "weir/core/clock.hpp"

#include <algorithm>

#include "weir/core/assert.hpp"

namespace weir::core {

SleepStatus sleep_until(std::int64_t deadline_ns, const std::atomic<bool>* stop, std::int64_t slice_ns) noexcept {
  WEIR_ENFORCE(slice_ns > 0, "sleep_until needs a positive slice");
  for (;;) {
    if (stop != nullptr && stop->load(std::memory_order_relaxed)) return SleepStatus::stopped;  // a flag: nothing is ordered on it
    const std::int64_t now = monotonic_ns();
    if (now >= deadline_ns) return SleepStatus::deadline;
    const std::int64_t until = now + std::min(deadline_ns - now, slice_ns);
    const timespec ts{static_cast<time_t>(until / kNsPerSecond), static_cast<long>(until % kNsPerSecond)};
    (void)clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);  // EINTR: a signal; look at stop
  }
}

}  // namespace weir::core

// The hang watchdog's thread. It only reads the three atomics the processing thread stores; the
// message is formatted and written with write(2) because the process is about to abort.
#include "weir/shard_host/watchdog.hpp"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "weir/core/clock.hpp"
#include "weir/shard_host/host_limits.hpp"

namespace weir::shard_host {

namespace {
}  // namespace

Watchdog::Watchdog(std::int64_t limit_ns, std::vector<Party> parties)
    : limit_ns_(limit_ns), parties_(std::move(parties)) {
  if (limit_ns_ > 0) thread_ = std::thread([this] { run(); });
}

Watchdog::~Watchdog() {
  if (!thread_.joinable()) return;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Watchdog::run() {
  const std::int64_t poll_ns = std::clamp(limit_ns_ / 10, kWatchdogMinPollNs, kWatchdogMaxPollNs);
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, std::chrono::nanoseconds(poll_ns), [this] { return stopping_; })) {
    const std::int64_t since = since_ns_.load(std::memory_order_acquire);  // pairs with arm()'s release
    if (since == 0) continue;
    const std::int64_t stuck = core::monotonic_ns() - since;
    // Re-check: the call may have ended (and another begun) between the two loads.
    if (stuck > limit_ns_ && since_ns_.load(std::memory_order_acquire) == since) fire(stuck);
  }
}

void Watchdog::fire(std::int64_t stuck_ns) const noexcept {
  const std::uint32_t who = who_.load(std::memory_order_relaxed);  // ordered by the acquire in run()
  const std::uint64_t sequence = sequence_.load(std::memory_order_relaxed);
  const Party* p = who < parties_.size() ? &parties_[who] : nullptr;
  char text[1024];
  const int n = std::snprintf(
      text, sizeof text,
      "weir: watchdog: %s (instance '%s') has been in process() for %.3f s on block %llu of channel '%s', "
      "past the %.3f s limit (--watchdog); aborting the host\n",
      p != nullptr ? p->shard.c_str() : "shard", p != nullptr ? p->instance.c_str() : "?",
      static_cast<double>(stuck_ns) / static_cast<double>(core::kNsPerSecond), static_cast<unsigned long long>(sequence),
      p != nullptr ? p->input.c_str() : "?", static_cast<double>(limit_ns_) / static_cast<double>(core::kNsPerSecond));
  if (n > 0) (void)!write(STDERR_FILENO, text, std::min(static_cast<std::size_t>(n), sizeof text - 1));
  std::abort();
}

}  // namespace weir::shard_host

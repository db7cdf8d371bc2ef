#pragma once
// SIGINT and SIGTERM as a stop flag, for commands that run until stopped (sim, shard, replay,
// periodic snapshots): the work loop polls the flag, so writers and readers leave through their
// destructors and the command prints its report.
#include <atomic>

#include <signal.h>

namespace weir::tools {

/// Installs the handlers for its lifetime (clearing the flag first) and restores the previous ones
/// after. No SA_RESTART: a deadline sleep or futex wait returns early with EINTR and sees the flag.
/// Thread: main; one at a time.
class StopSignals {
 public:
  StopSignals() noexcept;
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  ~StopSignals();

  /// Set by SIGINT or SIGTERM while a StopSignals lives.
  [[nodiscard]] static const std::atomic<bool>& flag() noexcept;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

}  // namespace weir::tools

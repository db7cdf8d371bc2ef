#pragma once
// SIGINT and SIGTERM as a stop flag, for commands that run until stopped (sim, shard, replay,
// periodic snapshots): the work loop polls the flag, so writers and readers leave through their
// destructors and the command prints its report.
#include <atomic>
#include <cstdint>

#include <signal.h>

namespace weir::tools {

/// What a StopSignals does with SIGPIPE while it lives.
enum class Sigpipe : std::uint8_t {
  keep,    // as it was: a write to a closed pipe kills the process
  ignore,  // a closed stdout is a write error (EPIPE), so the command leaves through its destructors
};

/// Installs the handlers for its lifetime (clearing the flag first) and restores the previous ones
/// after. No SA_RESTART: a deadline sleep or futex wait returns early with EINTR and sees the flag.
/// Thread: main; one at a time.
class StopSignals {
 public:
  explicit StopSignals(Sigpipe pipe = Sigpipe::keep) noexcept;
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  ~StopSignals();

  /// Set by SIGINT or SIGTERM while a StopSignals lives.
  [[nodiscard]] static const std::atomic<bool>& flag() noexcept;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
  struct sigaction old_pipe_ {};
  bool pipe_ignored_ = false;
};

}  // namespace weir::tools

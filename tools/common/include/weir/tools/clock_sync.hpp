#pragma once
// The kernel's view of the system clock's synchronisation (adjtimex(2), read only): weir stamps
// blocks with CLOCK_REALTIME, so a clock that NTP or PTP no longer disciplines makes every file's
// times drift. Read by `weir serve`'s /metrics (weir_clock_*) and by `weir run`'s alerts.
#include <optional>

namespace weir::tools {

struct ClockSync {
  bool synchronized = false;    // the kernel's clock state is not TIME_ERROR and STA_UNSYNC is clear
  double max_error_s = 0;       // maxerror: the bound on the clock's error the sync daemon keeps
  double estimated_error_s = 0; // esterror
};

/// From adjtimex's return value and the struct's status and error fields (microseconds). Pure.
[[nodiscard]] ClockSync clock_sync_from(int clock_state, int status, long max_error_us, long estimated_error_us) noexcept;

/// The kernel's figures now (adjtimex with modes 0, allowed without privileges); none when it fails.
/// Thread: any.
[[nodiscard]] std::optional<ClockSync> read_clock_sync() noexcept;

}  // namespace weir::tools

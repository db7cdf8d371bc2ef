#pragma once
// The kernel's view of the system clock's synchronisation (adjtimex(2), read only): weir stamps
// blocks with CLOCK_REALTIME, so a clock that NTP or PTP no longer disciplines makes every file's
// times drift. The figures node_exporter shows as node_timex_*, for boxes that run weir serve only.
#include <cstdint>
#include <string>

namespace weir::serve {

struct ClockSync {
  bool synchronized = false;    // the kernel's clock state is not TIME_ERROR and STA_UNSYNC is clear
  double max_error_s = 0;       // maxerror: the bound on the clock's error the sync daemon keeps
  double estimated_error_s = 0; // esterror
};

/// From adjtimex's return value and the struct's status and error fields (microseconds). Pure.
[[nodiscard]] ClockSync clock_sync_from(int clock_state, int status, long max_error_us, long estimated_error_us) noexcept;

/// Appends weir_clock_synchronized, weir_clock_max_error_seconds and weir_clock_estimated_error_seconds
/// (nothing when adjtimex fails). Thread: any.
void append_clock_metrics(std::string& out);

}  // namespace weir::serve

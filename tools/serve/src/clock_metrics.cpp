#include "clock_metrics.hpp"

#include <sys/timex.h>

#include "metric_family.hpp"

namespace weir::serve {

ClockSync clock_sync_from(int clock_state, int status, long max_error_us, long estimated_error_us) noexcept {
  ClockSync s;
  s.synchronized = clock_state != TIME_ERROR && (status & STA_UNSYNC) == 0;
  s.max_error_s = static_cast<double>(max_error_us) / 1e6;
  s.estimated_error_s = static_cast<double>(estimated_error_us) / 1e6;
  return s;
}

void append_clock_metrics(std::string& out) {
  timex tx{};  // modes 0: read only, allowed without privileges
  const int state = adjtimex(&tx);
  if (state < 0) return;
  const ClockSync s = clock_sync_from(state, tx.status, tx.maxerror, tx.esterror);
  Family(out, "weir_clock_synchronized", "gauge",
         "1 while the kernel says the system clock is synchronised (adjtimex: no TIME_ERROR, STA_UNSYNC clear).")
      .sample("", std::uint64_t{s.synchronized ? 1U : 0U});
  Family(out, "weir_clock_max_error_seconds", "gauge", "The kernel's bound on the system clock's error (adjtimex maxerror).")
      .sample("", s.max_error_s);
  Family(out, "weir_clock_estimated_error_seconds", "gauge", "The kernel's estimate of the system clock's error (adjtimex esterror).")
      .sample("", s.estimated_error_s);
}

}  // namespace weir::serve

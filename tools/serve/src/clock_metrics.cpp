#include "clock_metrics.hpp"

#include "metric_family.hpp"

namespace weir::serve {

void append_clock_metrics(std::string& out) {
  const auto maybe_sync = tools::read_clock_sync();
  if (!maybe_sync) return;
  const ClockSync& s = *maybe_sync;
  Family(out, "weir_clock_synchronized", "gauge",
         "1 while the kernel says the system clock is synchronised (adjtimex: no TIME_ERROR, STA_UNSYNC clear).")
      .sample("", std::uint64_t{s.synchronized ? 1U : 0U});
  Family(out, "weir_clock_max_error_seconds", "gauge", "The kernel's bound on the system clock's error (adjtimex maxerror).")
      .sample("", s.max_error_s);
  Family(out, "weir_clock_estimated_error_seconds", "gauge", "The kernel's estimate of the system clock's error (adjtimex esterror).")
      .sample("", s.estimated_error_s);
}

}  // namespace weir::serve

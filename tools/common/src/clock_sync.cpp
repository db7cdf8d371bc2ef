#include "weir/tools/clock_sync.hpp"

#include <sys/timex.h>

namespace weir::tools {

ClockSync clock_sync_from(int clock_state, int status, long max_error_us, long estimated_error_us) noexcept {
  ClockSync s;
  s.synchronized = clock_state != TIME_ERROR && (status & STA_UNSYNC) == 0;
  s.max_error_s = static_cast<double>(max_error_us) / 1e6;
  s.estimated_error_s = static_cast<double>(estimated_error_us) / 1e6;
  return s;
}

std::optional<ClockSync> read_clock_sync() noexcept {
  timex tx{};  // modes 0: read only
  const int state = adjtimex(&tx);
  if (state < 0) return std::nullopt;
  return clock_sync_from(state, tx.status, tx.maxerror, tx.esterror);
}

}  // namespace weir::tools

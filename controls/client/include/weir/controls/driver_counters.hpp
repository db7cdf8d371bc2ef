#pragma once
// A control-system driver's counters, kept by the control system's threads and published by the
// driver's as keys `<part>.pvs`, `pvs_connected`, `updates`, `connects`, `disconnects`, `dropped`,
// `truncated`, `log_blocks` (and `polled` where the driver polls), with `<part>.link`; `weir serve`'s
// /metrics exports them.
#include <atomic>
#include <cstdint>
#include <string>

#include "weir/core/arena.hpp"
#include "weir/core/counter_keys.hpp"

namespace weir::controls {

/// Counted by the control system's threads: relaxed increments, read by publish() as statistics.
struct DriverCounts {
  std::atomic<std::uint64_t> updates{0}, connects{0}, disconnects{0}, truncated{0}, connected{0}, polled{0};
};

class CounterPublisher {
 public:
  /// `polled`: the driver has the `polled` counter (Tango's). Thread: control only.
  CounterPublisher(const core::Arena& arena, const std::string& part, bool polled);

  /// Writes the counters; `items` listed, `dropped` and `log_blocks` from the queue and the log.
  /// Thread: the driver's.
  void publish(std::uint64_t items, const DriverCounts& counts, std::uint64_t dropped, std::uint64_t log_blocks);

 private:
  core::CounterKeys keys_;
  bool polled_;
};

/// The counters as the keys hold them when the driver stopped (0 for a key not there).
struct DriverTotals {
  std::uint64_t connected = 0, updates = 0, connects = 0, disconnects = 0, dropped = 0, truncated = 0, log_blocks = 0,
                polled = 0;
};

/// Thread: any.
[[nodiscard]] DriverTotals read_totals(const core::Arena& arena, const std::string& part);

/// Copies the totals into a driver's report (its `polled` where it has one).
template <class Report>
void copy_totals(const DriverTotals& t, Report& report) {
  report.connected = t.connected;
  report.updates = t.updates;
  report.connects = t.connects;
  report.disconnects = t.disconnects;
  report.dropped = t.dropped;
  report.truncated = t.truncated;
  report.log_blocks = t.log_blocks;
  if constexpr (requires { report.polled; }) report.polled = t.polled;
}

}  // namespace weir::controls

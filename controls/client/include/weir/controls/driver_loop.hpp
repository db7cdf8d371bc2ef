#pragma once
// The driver's own thread: every tick it moves full blocks of queued entries into the PV log, every
// flush_ms the rest, every 200 ms the counters; once, after connect_timeout_s, it names the items not
// connected yet; it stops at the stop flag or after duration_s.
#include <atomic>
#include <cstddef>
#include <string>

#include "weir/controls/driver_settings.hpp"

namespace weir::controls {

/// What the loop asks of a driver. Thread: the driver's (the one running run_driver_loop()).
class DriverThread {
 public:
  virtual ~DriverThread() = default;
  /// Moves queued entries into the log: full blocks, and the rest when `all`.
  virtual void flush(bool all) = 0;
  virtual void publish_counters() = 0;
  /// How many items are not connected now; the first `max` of their names appended to `names`, ", " between.
  virtual std::size_t not_connected(std::string& names, std::size_t max) = 0;
};

struct LoopEnd {
  bool stopped = false;  // by the stop flag (not the duration)
  double elapsed_s = 0;
};

/// Runs the loop until `stop` or settings.duration_s; `total` `items` ("PVs") in the connection
/// warning. Thread: the driver's.
LoopEnd run_driver_loop(const DriverSettings& settings, std::size_t total, const char* items, DriverThread& driver,
                        const std::atomic<bool>& stop);

}  // namespace weir::controls

#pragma once
// driver "tango": attributes of other Tango devices into keys (scalars) and channels (spectra), by
// event subscription where the device pushes events, by polling at a declared period where it does
// not; quality, the device's time stamp and units logged; a device gone is a disconnect, never a value.
#include <atomic>
#include <cstdint>
#include <string>

#include "weir/config/pipeline.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/error.hpp"

namespace weir::tango {

struct DriverReport {
  double elapsed_s = 0;
  bool stopped = false;
  std::uint64_t attributes = 0, connected = 0, updates = 0, disconnects = 0, dropped = 0;
  std::uint64_t polled = 0, connects = 0, truncated = 0, log_blocks = 0;
  [[nodiscard]] std::string text() const;
  [[nodiscard]] std::string json() const;
};

/// Runs the pipeline's `driver "tango"` named by `driver` until `stop` or `duration_s` (> 0).
[[nodiscard]] core::Result<DriverReport> run_driver(const core::Arena& arena, const config::Pipeline& pipeline,
                                                    const config::DriverDecl& driver, double duration_s,
                                                    const std::atomic<bool>& stop);

}  // namespace weir::tango

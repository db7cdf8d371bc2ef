#pragma once
// driver "epics": a Channel Access client that monitors a pipeline's PVs (never polls). Scalars
// become typed keys and entries of the PV log channel (core/pv_log.hpp), with the IOC's timestamp,
// alarm severity and status; units, limits and enum states come from DBR_CTRL once per connection
// (the meta key `<log>.pv.<i>`); waveforms become channels, one frame per update, a `disconnected`
// gap while their IOC is away. Reconnects by itself (Channel Access does). README: epics/README.md.
#include <atomic>
#include <cstdint>
#include <string>

#include "weir/core/arena.hpp"
#include "weir/core/error.hpp"
#include "weir/epics/epics_config.hpp"

namespace weir::epics {

struct DriverReport {
  double elapsed_s = 0;
  bool stopped = false;             // by the stop flag (not the duration)
  std::uint64_t pvs = 0, connected = 0;  // PVs listed, connected at the end
  std::uint64_t updates = 0;        // value updates logged (scalars) or published (waveform frames)
  std::uint64_t connects = 0, disconnects = 0;
  std::uint64_t dropped = 0;        // updates the full queue dropped (each in a `dropped` log entry)
  std::uint64_t truncated = 0;      // waveform updates longer than the channel's frame (cut to it)
  std::uint64_t log_blocks = 0;     // PV log blocks published
  [[nodiscard]] std::string text() const;
  [[nodiscard]] std::string json() const;
};

/// Runs until `stop` (or options.duration_s). Fails at start (a channel or key the arena lacks,
/// EPICS's client context refused); never for a PV that does not connect (it is waited for).
[[nodiscard]] core::Result<DriverReport> run_driver(const core::Arena& arena, const DriverOptions& options,
                                                    const std::atomic<bool>& stop);

}  // namespace weir::epics

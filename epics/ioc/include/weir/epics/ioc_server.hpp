#pragma once
// epics "serve": weir's status, chosen keys, channels and run control as EPICS process variables,
// served by EPICS's own server code: an IOC database whose records this process creates at start
// from the pipeline (the pattern of pythonSoftIOC) and updates through the database API, served by
// RSRV over Channel Access and, where EPICS base has it, QSRV over pvAccess. PV list: epics/ioc/README.md.
#include <atomic>
#include <cstdint>
#include <string>

#include "weir/config/pipeline.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/error.hpp"
#include "weir/epics/epics_config.hpp"

namespace weir::epics {

struct ServeReport {
  double elapsed_s = 0;
  std::uint64_t records = 0;       // records in the database
  std::uint64_t updates = 0;       // record updates posted
  std::uint64_t puts = 0;          // client puts accepted (writable keys, run control)
  std::uint64_t refused_puts = 0;  // puts refused (a run-control transition refused, a bad value)
  [[nodiscard]] std::string text() const;
  [[nodiscard]] std::string json() const;
};

/// Builds the database, starts the IOC (iocInit) and serves until `stop` or `duration_s` (> 0).
/// One per process: an IOC database is process-wide.
[[nodiscard]] core::Result<ServeReport> run_server(const core::Arena& arena, const config::Pipeline& pipeline,
                                                   const ServeOptions& options, double duration_s,
                                                   const std::atomic<bool>& stop);

}  // namespace weir::epics

#pragma once
// tango "serve": weir as a Tango device server on libtango: status, keys, channels, spectra and run
// control as attributes and commands, change and archive events pushed by weir itself.
#include <atomic>
#include <cstdint>
#include <string>

#include "weir/config/pipeline.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/error.hpp"

namespace weir::tango {

struct ServeReport {
  double elapsed_s = 0;
  std::uint64_t attributes = 0, events_pushed = 0, commands = 0, refused = 0;
  [[nodiscard]] std::string text() const;
  [[nodiscard]] std::string json() const;
};

/// Serves the pipeline's `tango "serve"` named by `decl` until `stop` or `duration_s` (> 0). `orb_args`
/// are extra arguments for the Tango/CORBA layer (-nodb -dlist ..., -ORBendPoint ...), from the command line.
[[nodiscard]] core::Result<ServeReport> run_server(const core::Arena& arena, const config::Pipeline& pipeline,
                                                   const config::TangoDecl& decl, double duration_s,
                                                   const std::atomic<bool>& stop);

}  // namespace weir::tango

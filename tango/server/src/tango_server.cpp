// Placeholder until the Tango device server lands: refuses to run, saying so.
#include "weir/tango/tango_server.hpp"

namespace weir::tango {

std::string ServeReport::text() const { return "tango serve: not built"; }
std::string ServeReport::json() const { return "{}"; }

core::Result<ServeReport> run_server(const core::Arena&, const config::Pipeline&, const config::TangoDecl&, double,
                                     const std::atomic<bool>&) {
  return core::fail(core::Errc::not_ready, "the Tango device server is not built yet");
}

}  // namespace weir::tango

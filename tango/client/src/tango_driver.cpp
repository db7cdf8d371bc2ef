// Placeholder until the Tango driver lands: refuses to run, saying so.
#include "weir/tango/tango_driver.hpp"

namespace weir::tango {

std::string DriverReport::text() const { return "tango driver: not built"; }
std::string DriverReport::json() const { return "{}"; }

core::Result<DriverReport> run_driver(const core::Arena&, const config::Pipeline&, const config::DriverDecl&, double,
                                      const std::atomic<bool>&) {
  return core::fail(core::Errc::not_ready, "the Tango driver is not built yet");
}

}  // namespace weir::tango

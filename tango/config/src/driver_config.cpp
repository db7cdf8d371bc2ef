// driver "tango": its settings, read through config::Fields.
#include "weir/tango/driver_config.hpp"

#include "weir/config/fields.hpp"

namespace weir::tango {

core::Result<void> check_driver(const config::Pipeline& /*pipeline*/, const config::DriverDecl& driver) {
  return tl::make_unexpected(config::driver_fields(driver).error("the Tango driver is not built yet"));
}

core::Result<std::vector<core::ChannelSpec>> driver_channels(const config::DriverDecl& /*driver*/) {
  return std::vector<core::ChannelSpec>{};
}

}  // namespace weir::tango

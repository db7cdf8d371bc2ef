// tango "serve": its settings, read through config::Fields.
#include "weir/tango/serve_config.hpp"

#include "weir/config/fields.hpp"

namespace weir::tango {

core::Result<void> check_serve(const config::Pipeline& pipeline) {
  for (const config::TangoDecl& t : pipeline.tangos)
    return tl::make_unexpected(config::Fields("tango \"" + t.name + "\"", t.origin, t.settings)
                                   .error("the Tango device server is not built yet"));
  return {};
}

}  // namespace weir::tango

// One line per driver kind that reads its own settings: which subcommand runs it, and the check its
// module's `<module>_config` library provides (acq_udp_config, acq_instrument_config, acq_lua_config,
// bridge_config, kafka_config, epics_config, tango_config). Bridges, Kafka senders ("send") and EPICS servers are checked here too.
#include <string_view>

#include "weir/acq_lua/lua_driver_config.hpp"
#include "weir/bridge/pipeline_settings.hpp"
#include "weir/epics/epics_config.hpp"
#include "weir/tango/driver_config.hpp"
#include "weir/tango/serve_config.hpp"
#include "weir/instrument/instrument_config.hpp"
#include "weir/kafka/pipeline_settings.hpp"
#include "weir/supervisor/pipeline_drivers.hpp"
#include "weir/udp/udp_config.hpp"

namespace weir::supervisor {

namespace {

using Check = core::Result<void> (*)(const config::Pipeline&, const config::DriverDecl&);

struct DriverKind {
  std::string_view kind;
  const char* subcommand;
  Check check;  // nullptr: this build has no such driver
};

constexpr DriverKind kKinds[] = {
    {"udp", "udp", &acq::check_udp_driver},
    {"scpi", "scpi", &acq::check_instrument_driver},
    {"serial", "serial", &acq::check_instrument_driver},
    {"lua", "lua-driver", &acq::check_lua_driver},
    {"bridge", "bridge recv", &bridge::check_receiver_driver},
    {"kafka", "kafka recv", &kafka::check_receiver_driver},
    {"epics", "driver", &epics::check_driver},  // run by weir-epics, not weir (run_plan.cpp)
    {"tango", "driver", &tango::check_driver},  // run by weir-tango, not weir
};

const DriverKind* find_kind(std::string_view kind) noexcept {
  for (const auto& k : kKinds)
    if (k.kind == kind) return &k;
  return nullptr;
}

}  // namespace

const char* driver_subcommand(const std::string& kind) noexcept {
  const DriverKind* k = find_kind(kind);
  return k != nullptr ? k->subcommand : "";
}

core::Result<void> check_drivers(const config::Pipeline& pipeline) {
  for (const auto& d : pipeline.drivers) {
    const DriverKind* k = find_kind(d.kind);
    if (k == nullptr) continue;
    if (k->check == nullptr)
      return tl::make_unexpected(config::error_at(d.origin, "driver \"" + d.name + "\": this weir has no " +
                                                                d.kind + " driver"));
    if (auto ok = k->check(pipeline, d); !ok) return ok;
  }
  // bridge "send" and kafka "send": not drivers, but settings of the same kind
  if (auto ok = bridge::check_bridges(pipeline); !ok) return ok;
  if (auto ok = epics::check_serve(pipeline); !ok) return ok;
  if (auto ok = tango::check_serve(pipeline); !ok) return ok;
  return kafka::check_kafka_senders(pipeline);
}

config::DriverChannels pipeline_driver_channels() {
  return [](const config::DriverDecl& d) -> core::Result<std::vector<core::ChannelSpec>> {
    if (d.kind == "tango") return tango::driver_channels(d);
    return epics::driver_channels(d);
  };
}

}  // namespace weir::supervisor

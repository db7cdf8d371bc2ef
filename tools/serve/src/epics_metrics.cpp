// PART.FIELD keys of driver "epics" (epics/client) -> weir_epics_* families. A part is an EPICS
// driver when it keeps PART.pvs_connected; the fields are what follows its last dot.
#include "epics_metrics.hpp"

#include <array>
#include <map>
#include <string_view>

#include <fmt/format.h>

#include "metric_family.hpp"
#include "weir/serve/metrics.hpp"

namespace weir::serve {

namespace {

constexpr std::string_view kMarker = ".pvs_connected";

struct Exported {
  std::string_view family, field, type, help;
};

constexpr std::array kExported{
    Exported{"weir_epics_pvs", "pvs", "gauge", "PVs an EPICS driver monitors."},
    Exported{"weir_epics_pvs_connected", "pvs_connected", "gauge", "PVs an EPICS driver has connected now."},
    Exported{"weir_epics_updates_total", "updates", "counter",
             "Monitor updates an EPICS driver took: scalar values logged and waveform frames published."},
    Exported{"weir_epics_connects_total", "connects", "counter", "PV connections (first ones and reconnects)."},
    Exported{"weir_epics_disconnects_total", "disconnects", "counter", "PV disconnections (their server went away)."},
    Exported{"weir_epics_dropped_total", "dropped", "counter",
             "Updates an EPICS driver dropped (its queue full, or its PV log channel refused a block); each is in the log."},
    Exported{"weir_epics_truncated_total", "truncated", "counter", "Waveform updates longer than their channel's frame."},
    Exported{"weir_epics_log_blocks_total", "log_blocks", "counter", "PV log blocks published."},
};

}  // namespace

void append_epics_metrics(std::string& out, const core::KvStore& kv) {
  std::map<std::string, std::map<std::string, std::uint64_t, std::less<>>> parts;  // part -> field -> value
  kv.for_each_key([&](std::string_view key, const core::ValueInfo& info) {
    if (info.type == core::ValueType::u64 && key.ends_with(kMarker))
      parts.try_emplace(std::string(key.substr(0, key.size() - kMarker.size())));
  });
  if (parts.empty()) return;
  for (auto& [part, fields] : parts)
    for (const Exported& e : kExported) {
      std::uint64_t bits = 0;
      core::ValueType type = core::ValueType::none;
      if (kv.get_scalar(part + "." + std::string(e.field), bits, type) == core::KvStatus::ok && type == core::ValueType::u64)
        fields[std::string(e.field)] = bits;
    }
  for (const Exported& e : kExported) {
    std::string samples;
    for (const auto& [part, fields] : parts)
      if (const auto it = fields.find(e.field); it != fields.end())
        samples += fmt::format("{}{{part=\"{}\"}} {}\n", e.family, escape_label(part), it->second);
    if (samples.empty()) continue;
    Family(out, e.family, e.type, e.help);
    out += samples;
  }
}

}  // namespace weir::serve

#pragma once
// A PV's meta key (core/pv_log.hpp): what the PV is, as JSON, from its DBR_CTRL_* answer.
#include <cstdint>
#include <string>
#include <vector>

#include "weir/core/pv_log.hpp"

namespace weir::epics {

/// What DBR_CTRL_* says of a PV, in the driver's terms.
struct PvMeta {
  std::string pv, key, host;
  core::PvType type = core::PvType::unknown;
  std::string units;
  int precision = -1;                  // -1: none (integers, enums, strings)
  bool has_limits = false;
  double display_low = 0, display_high = 0, control_low = 0, control_high = 0;
  double alarm_low = 0, alarm_high = 0, warning_low = 0, warning_high = 0;
  std::vector<std::string> states;     // an enum's
};

/// The meta key's JSON text.
[[nodiscard]] std::string meta_json(const PvMeta& meta);

}  // namespace weir::epics

#pragma once
// An attribute's meta key (core/pv_log.hpp, `<log>.pv.<index>`): what it is, as JSON, from the
// device's AttributeInfoEx.
#include <string>
#include <vector>

#include <tango.h>

#include "weir/core/pv_log.hpp"

namespace weir::tango {

struct AttrMeta {
  std::string pv;    // "dev/fam/mem/attr"
  std::string key, host;
  core::PvType type = core::PvType::unknown;
  std::string units, description, format;
  std::vector<std::string> labels;  // an enum's or a state's
  std::string alarm_low, alarm_high, warning_low, warning_high, min_value, max_value;  // the device's text
};

/// Fills the device's part of `meta` (type, units, labels, limits) from its attribute_query() answer.
void describe(const ::Tango::AttributeInfoEx& info, AttrMeta& meta);
/// The meta key's JSON text.
[[nodiscard]] std::string meta_json(const AttrMeta& meta);

}  // namespace weir::tango

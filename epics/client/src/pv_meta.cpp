#include "pv_meta.hpp"

#include "weir/json/json.hpp"

namespace weir::epics {

namespace {

std::string pair(double lo, double hi) {
  json::JsonArray a;
  a.real(lo).real(hi);
  return a.str();
}

}  // namespace

std::string meta_json(const PvMeta& m) {
  json::JsonObject o;
  o.text("pv", m.pv).text("key", m.key).text("type", core::pv_type_name(m.type));
  if (!m.host.empty()) o.text("host", m.host);
  if (m.type == core::PvType::f64 || m.type == core::PvType::i64) {
    o.text("units", m.units);
    if (m.precision >= 0) o.number("precision", m.precision);
    if (m.has_limits)
      o.raw("display", pair(m.display_low, m.display_high))
          .raw("control", pair(m.control_low, m.control_high))
          .raw("alarm", pair(m.alarm_low, m.alarm_high))
          .raw("warning", pair(m.warning_low, m.warning_high));
  }
  if (m.type == core::PvType::enumerated) {
    json::JsonArray states;
    for (const auto& s : m.states) states.text(s);
    o.raw("enum", states.str());
  }
  return o.str();
}

}  // namespace weir::epics

#include "attr_meta.hpp"

#include <cstdlib>

#include "attr_values.hpp"
#include "weir/json/json.hpp"

namespace weir::tango {

namespace {

// Tango's placeholders for a property nobody set.
std::string set_or_empty(const std::string& s) {
  return s == "No unit" || s == "Not specified" || s == "No description" || s == "None" ? std::string() : s;
}

bool number(const std::string& s, double& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end != nullptr && *end == '\0';
}

void pair(json::JsonObject& o, const char* name, const std::string& lo, const std::string& hi) {
  double a = 0, b = 0;
  if (!number(lo, a) || !number(hi, b)) return;
  json::JsonArray p;
  p.real(a).real(b);
  o.raw(name, p.str());
}

}  // namespace

void describe(const ::Tango::AttributeInfoEx& info, AttrMeta& meta) {
  meta.type = pv_type_of(info.data_type);
  meta.units = set_or_empty(info.unit);
  meta.description = set_or_empty(info.description);
  meta.format = set_or_empty(info.format);
  meta.labels.clear();
  if (info.data_type == ::Tango::DEV_ENUM) meta.labels = info.enum_labels;
  if (info.data_type == ::Tango::DEV_STATE) meta.labels = state_names();
  meta.min_value = set_or_empty(info.min_value), meta.max_value = set_or_empty(info.max_value);
  meta.alarm_low = set_or_empty(info.alarms.min_alarm), meta.alarm_high = set_or_empty(info.alarms.max_alarm);
  meta.warning_low = set_or_empty(info.alarms.min_warning), meta.warning_high = set_or_empty(info.alarms.max_warning);
}

std::string meta_json(const AttrMeta& m) {
  json::JsonObject o;
  o.text("pv", m.pv).text("key", m.key).text("type", core::pv_type_name(m.type)).text("system", "tango");
  if (!m.host.empty()) o.text("host", m.host);
  if (m.type == core::PvType::f64 || m.type == core::PvType::i64) {
    o.text("units", m.units);
    pair(o, "control", m.min_value, m.max_value);
    pair(o, "alarm", m.alarm_low, m.alarm_high);
    pair(o, "warning", m.warning_low, m.warning_high);
  }
  if (!m.description.empty()) o.text("description", m.description);
  if (!m.format.empty()) o.text("format", m.format);
  if (m.type == core::PvType::enumerated) {
    json::JsonArray states;
    for (const auto& s : m.labels) states.text(s);
    o.raw("enum", states.str());
  }
  return o.str();
}

}  // namespace weir::tango

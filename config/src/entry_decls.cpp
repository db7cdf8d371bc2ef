// entry { ... }, source "NAME" { ... } and a channel's calibration = { ... }: checked here, written
// by recorders (recorders/stream, entry_fields.cpp and nexus_fields.cpp).
#include "entry_decls.hpp"

#include <array>
#include <cmath>

#include <fmt/format.h>

namespace weir::config::detail {

using core::Result;

namespace {

constexpr std::array kEntryKeys{"title", "definition", "default"};
constexpr std::array kSourceKeys{"type", "probe"};
constexpr std::array kCalibrationKeys{"scale", "offset", "units"};
// NeXus NXsource's enumerations (NeXus 2024.02).
constexpr std::array kSourceTypes{"Spallation Neutron Source", "Pulsed Reactor Neutron Source", "Reactor Neutron Source",
                                  "Synchrotron X-ray Source", "Pulsed Muon Source", "Rotating Anode X-ray",
                                  "Fixed Tube X-ray", "UV Laser", "Free-Electron Laser", "Optical Laser", "Ion Source",
                                  "UV Plasma Source", "Metal Jet X-ray", "Laser", "Dye Laser",
                                  "Broadband Tunable Light Source", "Halogen lamp", "LED",
                                  "Mercury Cadmium Telluride Lamp", "Deuterium Lamp", "Xenon Lamp", "Globar"};
constexpr std::array kSourceProbes{"neutron", "photon", "x-ray", "muon", "electron", "ultraviolet", "visible light",
                                   "positron", "proton"};

template <std::size_t N>
Result<void> one_of(const Fields& f, const char* key, const std::string& value, const std::array<const char*, N>& known) {
  for (const char* k : known)
    if (value == k) return {};
  std::string list;
  for (const char* k : known) list += (list.empty() ? "\"" : ", \"") + std::string(k) + "\"";
  return tl::make_unexpected(f.error(fmt::format("'{}' = \"{}\" is not one NeXus names{}; NXsource's are: {}", key, value,
                                                 did_you_mean(value, known), list)));
}

bool nxdl_name(const std::string& s) {
  if (s.size() < 3 || s.compare(0, 2, "NX") != 0) return false;
  for (const char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

}  // namespace

Result<void> load_entry(Fields f, EntryDecl& e) {
  e.origin = f.origin();
  auto title = f.text("title", "");
  if (!title) return tl::make_unexpected(title.error());
  auto definition = f.text("definition", "");
  if (!definition) return tl::make_unexpected(definition.error());
  auto plot = f.text("default", "");
  if (!plot) return tl::make_unexpected(plot.error());
  if (!definition->empty() && !nxdl_name(*definition))
    return tl::make_unexpected(f.error("'definition' = \"" + *definition +
                                       "\" is not the name of a NeXus definition (\"NX\" then letters, digits or '_', "
                                       "e.g. \"NXmonopd\")"));
  e.title = *title;
  e.definition = *definition;
  e.default_plot = *plot;
  return f.no_other_keys(kEntryKeys);
}

Result<void> load_source(const std::string& name, Fields f, SourceDecl& s) {
  s.origin = f.origin();
  s.name = name;
  if (name.empty()) return tl::make_unexpected(f.error("the source needs a name: source \"ESS\" { ... }"));
  auto type = f.text("type", "");
  if (!type) return tl::make_unexpected(type.error());
  auto probe = f.text("probe", "");
  if (!probe) return tl::make_unexpected(probe.error());
  if (!type->empty())
    if (auto ok = one_of(f, "type", *type, kSourceTypes); !ok) return ok;
  if (!probe->empty())
    if (auto ok = one_of(f, "probe", *probe, kSourceProbes); !ok) return ok;
  s.type = *type;
  s.probe = *probe;
  return f.no_other_keys(kSourceKeys);
}

Result<std::optional<Calibration>> load_calibration(Fields& f, const std::string& units) {
  if (!f.has("calibration")) return std::optional<Calibration>{};
  auto t = f.table("calibration", true);
  if (!t) return tl::make_unexpected(t.error());
  auto scale = t->number("scale");
  if (!scale) return tl::make_unexpected(scale.error());
  auto offset = t->number("offset", 0.0);
  if (!offset) return tl::make_unexpected(offset.error());
  auto cal_units = t->text("units", units);
  if (!cal_units) return tl::make_unexpected(cal_units.error());
  if (!std::isfinite(*scale) || *scale == 0)
    return tl::make_unexpected(t->error(fmt::format("'scale' = {} must be a finite number other than 0 (value = offset + "
                                                    "scale * raw)", *scale)));
  if (!std::isfinite(*offset))
    return tl::make_unexpected(t->error(fmt::format("'offset' = {} must be a finite number", *offset)));
  if (auto ok = t->no_other_keys(kCalibrationKeys); !ok) return tl::make_unexpected(ok.error());
  return Calibration{*scale, *offset, *cal_units};
}

}  // namespace weir::config::detail

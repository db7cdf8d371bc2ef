// tango "serve": its settings, read key by key through config::Fields, so every error names the file,
// the line, the part and the key.
#include "weir/tango/serve_config.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "weir/config/fields.hpp"
#include "weir/controls/driver_settings.hpp"

namespace weir::tango {

namespace {

using config::Fields;
using config::Setting;
using core::Result;

constexpr std::array kServeKeys{"device", "database", "instance", "host", "port", "file", "keys", "channels",
                                "status", "run_control", "update_hz", "stall_s", "out", "spectra"};
constexpr std::array kKeyAttrKeys{"key", "attribute", "writable", "units", "format", "min", "max", "abs_change",
                                  "rel_change", "archive_abs_change", "archive_rel_change"};
constexpr std::array kChannelAttrKeys{"channel", "attribute", "mode", "elements"};
constexpr std::array kSpectrumAttrKeys{"channel", "key", "attribute"};
constexpr std::size_t kMaxAttributeBytes = 255;

bool device_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || std::string_view("_-.+").find(c) != std::string_view::npos;
}

Result<double> serve_criterion(Fields& f, const char* key, double fallback) {
  auto v = f.number(key, fallback);
  if (!v) return v;
  if (!std::isfinite(*v) || *v < 0)
    return tl::make_unexpected(f.error(fmt::format("'{}' must be a number >= 0, not {}", key, *v)));
  return v;
}

Result<KeyAttr> read_key(const std::string& what, const config::Origin& origin, const Setting& s, std::size_t i,
                         Fields& owner) {
  KeyAttr k;
  if (s.type == Setting::Type::text) {
    k.key = s.text;
  } else if (s.type == Setting::Type::table && s.items.empty()) {
    Fields kf(fmt::format("{}.keys[{}]", what, i + 1), origin, s.fields);
    for (auto [key, field] : {std::pair{"key", &k.key}, std::pair{"attribute", &k.attribute}, std::pair{"units", &k.units},
                              std::pair{"format", &k.format}}) {
      auto v = std::string_view(key) == "key" ? kf.text(key) : kf.text(key, "");
      if (!v) return controls::pass(v);
      *field = *v;
    }
    auto writable = kf.boolean("writable", false);
    if (!writable) return controls::pass(writable);
    k.writable = *writable;
    for (auto [key, has, field] : {std::tuple{"min", &k.has_min, &k.min}, std::tuple{"max", &k.has_max, &k.max}}) {
      *has = kf.has(key);
      auto v = kf.number(key, 0);
      if (!v) return controls::pass(v);
      if (!std::isfinite(*v)) return tl::make_unexpected(kf.error(fmt::format("'{}' must be finite", key)));
      *field = *v;
    }
    if (k.has_min && k.has_max && k.min > k.max)
      return tl::make_unexpected(kf.error(fmt::format("'min' {} is above 'max' {}", k.min, k.max)));
    EventCriteria& e = k.events;
    for (auto [key, field] : {std::pair{"abs_change", &e.abs_change}, std::pair{"rel_change", &e.rel_change}}) {
      auto v = serve_criterion(kf, key, 0);
      if (!v) return controls::pass(v);
      *field = *v;
    }
    for (auto [key, field, fallback] : {std::tuple{"archive_abs_change", &e.archive_abs_change, e.abs_change},
                                        std::tuple{"archive_rel_change", &e.archive_rel_change, e.rel_change}}) {
      auto v = serve_criterion(kf, key, fallback);
      if (!v) return controls::pass(v);
      *field = *v;
    }
    if (auto ok = kf.no_other_keys(kKeyAttrKeys); !ok) return controls::pass(ok);
  } else {
    return tl::make_unexpected(owner.error(
        fmt::format("keys[{}]: a key name or a table {{ key = \"...\", writable = true }}, not {}", i + 1, s.type_name())));
  }
  if (k.key.empty()) return tl::make_unexpected(owner.error(fmt::format("keys[{}]: the key's name is empty", i + 1)));
  if (k.attribute.empty()) k.attribute = attribute_part_of(k.key);
  return k;
}

Result<ChannelAttr> read_channel(const std::string& what, const config::Origin& origin, const Setting& s, std::size_t i,
                                 Fields& owner) {
  ChannelAttr c;
  if (s.type == Setting::Type::text) {
    c.channel = s.text;
  } else if (s.type == Setting::Type::table && s.items.empty()) {
    Fields cf(fmt::format("{}.channels[{}]", what, i + 1), origin, s.fields);
    auto channel = cf.text("channel");
    if (!channel) return controls::pass(channel);
    c.channel = *channel;
    auto attribute = cf.text("attribute", "");
    if (!attribute) return controls::pass(attribute);
    c.attribute = *attribute;
    auto mode = cf.text("mode", "newest");
    if (!mode) return controls::pass(mode);
    if (*mode != "newest" && *mode != "envelope")
      return tl::make_unexpected(cf.error(fmt::format("'mode' must be \"newest\" or \"envelope\", not \"{}\"", *mode)));
    c.mode = *mode;
    auto elements = cf.integer("elements", 0, kMaxSpectrumElements, 0);
    if (!elements) return controls::pass(elements);
    c.elements = static_cast<std::uint32_t>(*elements);
    if (auto ok = cf.no_other_keys(kChannelAttrKeys); !ok) return controls::pass(ok);
  } else {
    return tl::make_unexpected(owner.error(fmt::format(
        "channels[{}]: a channel name or a table {{ channel = \"...\", mode = \"envelope\" }}, not {}", i + 1, s.type_name())));
  }
  if (c.channel.empty()) return tl::make_unexpected(owner.error(fmt::format("channels[{}]: the channel's name is empty", i + 1)));
  if (c.attribute.empty()) c.attribute = attribute_part_of(c.channel);
  if (c.mode == "envelope" && c.elements == 0) c.elements = kDefaultEnvelopePoints;
  return c;
}

Result<SpectrumAttr> read_spectrum(const std::string& what, const config::Origin& origin, const Setting& s, std::size_t i,
                                   Fields& owner) {
  SpectrumAttr a;
  if (s.type == Setting::Type::text) {
    a.channel = s.text;
  } else if (s.type == Setting::Type::table && s.items.empty()) {
    Fields sf(fmt::format("{}.spectra[{}]", what, i + 1), origin, s.fields);
    if (sf.has("channel") == sf.has("key"))
      return tl::make_unexpected(sf.error("give one of 'channel' (a framed channel: the fft shard's PSD) and 'key' (an array "
                                          "key: the mca shard's <out>.spectrum)"));
    auto channel = sf.text("channel", "");
    if (!channel) return controls::pass(channel);
    a.channel = *channel;
    auto key = sf.text("key", "");
    if (!key) return controls::pass(key);
    a.key = *key;
    auto attribute = sf.text("attribute", "");
    if (!attribute) return controls::pass(attribute);
    a.attribute = *attribute;
    if (auto ok = sf.no_other_keys(kSpectrumAttrKeys); !ok) return controls::pass(ok);
  } else {
    return tl::make_unexpected(owner.error(fmt::format(
        "spectra[{}]: a framed channel's name or a table {{ channel = \"...\" }} or {{ key = \"...\" }}, not {}", i + 1,
        s.type_name())));
  }
  const std::string& name = a.key.empty() ? a.channel : a.key;
  if (name.empty()) return tl::make_unexpected(owner.error(fmt::format("spectra[{}]: the name is empty", i + 1)));
  if (a.attribute.empty()) a.attribute = attribute_part_of(name);
  return a;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

bool valid_device_name(const std::string& name, std::string& why) {
  std::size_t fields = 1;
  std::size_t field_start = 0;
  for (std::size_t i = 0; i <= name.size(); ++i) {
    if (i == name.size() || name[i] == '/') {
      if (i == field_start) {
        why = "has an empty field: a Tango device name is domain/family/member";
        return false;
      }
      if (i < name.size()) ++fields, field_start = i + 1;
      continue;
    }
    if (!device_char(name[i])) {
      why = fmt::format("holds '{}': a device name's fields are letters, digits and _-.+", name[i]);
      return false;
    }
  }
  if (fields != 3) {
    why = fmt::format("has {} field(s): a Tango device name is domain/family/member", fields);
    return false;
  }
  return true;
}

std::string attribute_part_of(const std::string& name) {
  std::string out = name;
  for (char& c : out)
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_') c = '_';
  if (!out.empty() && std::isalpha(static_cast<unsigned char>(out.front())) == 0) out.insert(0, "A");
  return out;
}

Result<ServeOptions> serve_options(const config::Pipeline& pipeline, const config::TangoDecl& decl) {
  ServeOptions o;
  o.part = decl.name;
  Fields f("tango \"" + decl.name + "\"", decl.origin, decl.settings);
  if (decl.thread) return tl::make_unexpected(f.error("the Tango server runs as a process of its own (weir-tango), not a thread"));
  auto device = f.text("device");
  if (!device) return controls::pass(device);
  std::string why;
  if (!valid_device_name(*device, why)) return tl::make_unexpected(f.error(fmt::format("'device' \"{}\" {}", *device, why)));
  o.device = *device;
  auto database = f.text("database", "tango");
  if (!database) return controls::pass(database);
  if (*database == "none") o.database = TangoDatabase::none;
  else if (*database == "file") o.database = TangoDatabase::file;
  else if (*database == "tango") o.database = TangoDatabase::tango;
  else
    return tl::make_unexpected(f.error(fmt::format("'database' must be \"tango\" (TANGO_HOST), \"file\" or \"none\", not \"{}\"",
                                                   *database)));
  auto instance = f.text("instance", decl.name);
  if (!instance) return controls::pass(instance);
  o.instance = attribute_part_of(*instance);
  auto host = f.text("host", "");
  if (!host) return controls::pass(host);
  o.host = *host;
  auto port = f.integer("port", 0, 65535, 0);
  if (!port) return controls::pass(port);
  o.port = static_cast<std::uint32_t>(*port);
  if (o.port == 0 && o.database != TangoDatabase::tango)
    return tl::make_unexpected(f.error("'port' is needed without the Tango database: clients find the device at "
                                       "tango://HOST:PORT/" + o.device + "#dbase=no"));
  auto file = f.text("file", "");
  if (!file) return controls::pass(file);
  if (!file->empty() && o.database != TangoDatabase::file)
    return tl::make_unexpected(f.error("'file' is for database = \"file\""));
  o.file = *file;

  std::set<std::string> names;  // Tango's attribute names are case-insensitive
  const auto unique = [&](const std::string& name, const char* list, std::size_t i) -> Result<void> {
    if (name.size() > kMaxAttributeBytes)
      return tl::make_unexpected(f.error(fmt::format("{}[{}]: attribute name \"{}\" is longer than {} bytes", list, i + 1, name,
                                                     kMaxAttributeBytes)));
    for (char c : name)
      if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_')
        return tl::make_unexpected(f.error(fmt::format("{}[{}]: attribute name \"{}\" holds '{}': letters, digits and _ only",
                                                       list, i + 1, name, c)));
    if (!names.insert(lower(name)).second)
      return tl::make_unexpected(f.error(fmt::format("{}[{}]: attribute \"{}\" is served twice", list, i + 1, name)));
    return {};
  };
  auto keys = controls::list_items(f, decl.settings, "keys");
  if (!keys) return controls::pass(keys);
  for (std::size_t i = 0; i < keys->size(); ++i) {
    auto k = read_key(f.what(), decl.origin, (*keys)[i], i, f);
    if (!k) return controls::pass(k);
    if (auto ok = unique(k->attribute, "keys", i); !ok) return controls::pass(ok);
    o.keys.push_back(std::move(*k));
  }
  auto channels = controls::list_items(f, decl.settings, "channels");
  if (!channels) return controls::pass(channels);
  for (std::size_t i = 0; i < channels->size(); ++i) {
    auto c = read_channel(f.what(), decl.origin, (*channels)[i], i, f);
    if (!c) return controls::pass(c);
    if (c->mode == "envelope") {
      for (const char* end : {"_Min", "_Max"})
        if (auto ok = unique(c->attribute + end, "channels", i); !ok) return controls::pass(ok);
    } else if (auto ok = unique(c->attribute, "channels", i); !ok) {
      return controls::pass(ok);
    }
    o.channels.push_back(std::move(*c));
  }
  auto spectra = controls::list_items(f, decl.settings, "spectra");
  if (!spectra) return controls::pass(spectra);
  for (std::size_t i = 0; i < spectra->size(); ++i) {
    auto a = read_spectrum(f.what(), decl.origin, (*spectra)[i], i, f);
    if (!a) return controls::pass(a);
    for (const char* end : {"", "_Axis"})
      if (auto ok = unique(a->attribute + end, "spectra", i); !ok) return controls::pass(ok);
    for (const config::ChannelDecl& c : pipeline.channels)  // a declared channel: its shape is known now
      if (c.spec.name == a->channel && !c.spec.frame.framed())
        return tl::make_unexpected(f.error(fmt::format("spectra[{}]: channel '{}' holds plain samples, not frames along an "
                                                       "axis: serve it with channels = {{...}}",
                                                       i + 1, a->channel)));
    o.spectra.push_back(std::move(*a));
  }
  for (const char* k : {"keys", "channels", "spectra"}) (void)f.table(k, false);  // read above; this takes them out
  auto status = f.boolean("status", true);
  if (!status) return controls::pass(status);
  o.status = *status;
  auto run_control = f.boolean("run_control", pipeline.arena.controlled_runs);
  if (!run_control) return controls::pass(run_control);
  if (*run_control && !pipeline.arena.controlled_runs)
    return tl::make_unexpected(f.error("'run_control' needs runs = \"controlled\" in the arena"));
  o.run_control = *run_control;
  auto hz = f.number("update_hz", 10);
  if (!hz) return controls::pass(hz);
  if (!std::isfinite(*hz) || *hz <= 0 || *hz > 1000)
    return tl::make_unexpected(f.error(fmt::format("'update_hz' must be above 0 and at most 1000, not {}", *hz)));
  o.update_hz = *hz;
  auto stall = f.number("stall_s", 2);
  if (!stall) return controls::pass(stall);
  if (!std::isfinite(*stall) || *stall <= 0) return tl::make_unexpected(f.error(fmt::format("'stall_s' must be > 0, not {}", *stall)));
  o.stall_s = *stall;
  auto out = f.text("out", "");
  if (!out) return controls::pass(out);
  o.record_dir = *out;
  if (o.record_dir.empty() && !pipeline.records.empty()) o.record_dir = pipeline.records.front().out;
  if (auto ok = f.no_other_keys(kServeKeys); !ok) return controls::pass(ok);
  return o;
}

Result<void> check_serve(const config::Pipeline& pipeline) {
  for (const config::TangoDecl& t : pipeline.tangos) {
    auto o = serve_options(pipeline, t);
    if (!o) return controls::pass(o);
  }
  return {};
}

}  // namespace weir::tango

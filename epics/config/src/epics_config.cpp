// driver_options() and serve_options(): a pipeline's EPICS declarations, read key by key through
// config::Fields, so every error names the file, the line, the part and the key.
#include "weir/epics/epics_config.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "weir/config/fields.hpp"
#include "weir/core/pv_log.hpp"

namespace weir::epics {

namespace {

using config::Fields;
using config::Setting;
using core::Result;

using controls::list_items;
using controls::pass;

constexpr std::array kDriverKeys{"pvs", "log", "log_block", "flush_ms", "connect_timeout_s", "queue", "ca", "duration_s"};
constexpr std::array kPvKeys{"pv", "key", "channel", "elements", "dtype", "rate", "ring", "units"};
constexpr std::array kCaKeys{"addr_list", "auto_addr_list", "max_array_bytes", "server_port", "repeater_port",
                             "conn_tmo", "name_servers"};
constexpr std::array kServeKeys{"prefix", "keys", "channels", "status", "run_control", "update_hz", "stall_s",
                                "server_port", "pva", "pva_server_port", "out"};
constexpr std::array kKeyPvKeys{"key", "pv", "writable", "units", "low", "high", "precision"};
constexpr std::array kChannelPvKeys{"channel", "pv", "mode", "elements"};

bool pv_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("_-:.[]<>;{}$+").find(c) != std::string_view::npos;
}

constexpr controls::ItemWords kWords{"pvs", "PV", "a PV", "PVs", "waveform", "the IOC", "PV log"};

Result<CaSettings> read_ca(Fields& f) {
  CaSettings ca;
  if (!f.has("ca")) return ca;
  auto t = f.table("ca", false);
  if (!t) return pass(t);
  const std::array<std::pair<const char*, const char*>, 7> names{{{"addr_list", "EPICS_CA_ADDR_LIST"},
                                                                  {"auto_addr_list", "EPICS_CA_AUTO_ADDR_LIST"},
                                                                  {"max_array_bytes", "EPICS_CA_MAX_ARRAY_BYTES"},
                                                                  {"server_port", "EPICS_CA_SERVER_PORT"},
                                                                  {"repeater_port", "EPICS_CA_REPEATER_PORT"},
                                                                  {"conn_tmo", "EPICS_CA_CONN_TMO"},
                                                                  {"name_servers", "EPICS_CA_NAME_SERVERS"}}};
  for (const auto& [key, env] : names) {
    if (!t->has(key)) continue;
    if (std::string_view(key) == "auto_addr_list") {
      auto b = t->boolean(key);
      if (!b) return pass(b);
      ca.env[env] = *b ? "YES" : "NO";
      continue;
    }
    if (std::string_view(key) == "max_array_bytes" || std::string_view(key) == "server_port" ||
        std::string_view(key) == "repeater_port") {
      const long long hi = std::string_view(key) == "max_array_bytes" ? (1LL << 31) - 1 : 65535;
      auto n = t->integer(key, 1, hi);
      if (!n) return pass(n);
      ca.env[env] = std::to_string(*n);
      continue;
    }
    auto text = t->text(key);
    if (!text) return pass(text);
    ca.env[env] = *text;
  }
  if (auto ok = t->no_other_keys(kCaKeys); !ok) return pass(ok);
  return ca;
}

Result<PvSpec> read_pv(const std::string& what, const config::Origin& origin, const Setting& item) {
  PvSpec pv;
  if (item.type == Setting::Type::text) {
    pv.pv = item.text;
  } else if (item.type == Setting::Type::table && item.items.empty()) {
    Fields f(what, origin, item.fields);
    auto name = f.text("pv");
    if (!name) return pass(name);
    pv.pv = *name;
    if (auto ok = controls::read_item_target(f, kWords, pv.key, pv); !ok) return pass(ok);
    if (auto ok = f.no_other_keys(kPvKeys); !ok) return pass(ok);
  } else {
    return tl::make_unexpected(config::error_at(origin, fmt::format("{}: a PV is a name (\"SR:CURRENT\") or a table "
                                                                    "({{ pv = \"...\", key = \"...\" }}), not {}",
                                                                    what, item.type_name())));
  }
  std::string why;
  if (!valid_pv_name(pv.pv, why))
    return tl::make_unexpected(config::error_at(origin, fmt::format("{}: PV name \"{}\" {}", what, pv.pv, why)));
  if (pv.channel.empty() && pv.key.empty()) pv.key = pv.pv;
  return pv;
}

}  // namespace

bool valid_pv_name(const std::string& name, std::string& why) {
  if (name.empty()) {
    why = "is empty";
    return false;
  }
  if (name.size() > kMaxPvNameBytes) {
    why = fmt::format("is {} bytes long; EPICS names have at most {}", name.size(), kMaxPvNameBytes);
    return false;
  }
  for (const char c : name)
    if (!pv_char(c)) {
      why = fmt::format("has the character '{}'; EPICS names use letters, digits and _-:.[]<>;{{}}$+",
                        c >= 0x20 && c < 0x7f ? std::string(1, c) : fmt::format("\\x{:02x}", static_cast<unsigned char>(c)));
      return false;
    }
  return true;
}

std::string pv_part_of(const std::string& name) {
  std::string out = name;
  for (char& c : out)
    if (c == '.') c = ':';
    else if (!pv_char(c)) c = '_';
  return out;
}

Result<DriverOptions> driver_options(const config::DriverDecl& driver) {
  DriverOptions o;
  o.part = driver.name;
  Fields f = config::driver_fields(driver);
  if (driver.thread) return tl::make_unexpected(f.error("an EPICS driver runs as a process of its own (weir-epics), not a thread"));
  if (!driver.channels.empty())
    return tl::make_unexpected(f.error("an EPICS driver makes its channels from its PVs (channel = \"...\" on a waveform "
                                       "PV); leave out 'channels'"));
  auto items = list_items(f, driver.settings, "pvs");
  if (!items) return pass(items);
  if (items->empty()) return tl::make_unexpected(f.error("'pvs' is required: the PVs to monitor, e.g. pvs = { \"SR:CURRENT\" }"));
  controls::ItemNames names(f, kWords);
  for (std::size_t i = 0; i < items->size(); ++i) {
    auto pv = read_pv(fmt::format("{}.pvs[{}]", f.what(), i + 1), driver.origin, (*items)[i]);
    if (!pv) return pass(pv);
    if (auto ok = names.add(i, pv->pv, pv->pv, pv->key, pv->channel); !ok) return pass(ok);
    o.pvs.push_back(std::move(*pv));
  }
  Fields& rest = f;
  (void)rest.table("pvs", false);  // read above from the raw settings; this takes it out
  if (auto ok = controls::read_driver_settings(rest, kWords, driver.name + ".pvlog", names.channels(), o); !ok) return pass(ok);
  auto ca = read_ca(rest);
  if (!ca) return pass(ca);
  o.ca = std::move(*ca);
  if (auto ok = rest.no_other_keys(kDriverKeys); !ok) return pass(ok);
  return o;
}

Result<std::vector<core::ChannelSpec>> driver_channels(const config::DriverDecl& driver) {
  if (driver.kind != "epics") return std::vector<core::ChannelSpec>{};
  auto o = driver_options(driver);
  if (!o) return pass(o);
  std::vector<core::ChannelSpec> out{controls::pv_log_channel_spec(*o)};
  for (const PvSpec& pv : o->pvs)
    if (!pv.channel.empty()) out.push_back(controls::frame_channel_spec(pv, "waveform"));
  return out;
}

Result<void> check_driver(const config::Pipeline& /*pipeline*/, const config::DriverDecl& driver) {
  auto o = driver_options(driver);
  if (!o) return pass(o);
  return {};
}

Result<ServeOptions> serve_options(const config::Pipeline& pipeline, const config::EpicsDecl& decl) {
  ServeOptions o;
  o.part = decl.name;
  Fields f("epics \"" + decl.name + "\"", decl.origin, decl.settings);
  if (decl.thread) return tl::make_unexpected(f.error("the EPICS server runs as a process of its own (weir-epics), not a thread"));
  auto prefix = f.text("prefix");
  if (!prefix) return pass(prefix);
  std::string why;
  if (!prefix->empty() && !valid_pv_name(*prefix, why))
    return tl::make_unexpected(f.error(fmt::format("'prefix' \"{}\" {}", *prefix, why)));
  o.prefix = *prefix;
  auto keys = list_items(f, decl.settings, "keys");
  if (!keys) return pass(keys);
  std::set<std::string> names;
  const auto unique_pv = [&](const std::string& pv, std::size_t i, const char* list) -> Result<void> {
    std::string bad;
    if (!valid_pv_name(o.prefix + pv, bad))
      return tl::make_unexpected(f.error(fmt::format("{}[{}]: PV name \"{}{}\" {}", list, i + 1, o.prefix, pv, bad)));
    if (!names.insert(pv).second)
      return tl::make_unexpected(f.error(fmt::format("{}[{}]: PV \"{}{}\" is served twice", list, i + 1, o.prefix, pv)));
    return {};
  };
  for (std::size_t i = 0; i < keys->size(); ++i) {
    const Setting& s = (*keys)[i];
    KeyPv k;
    if (s.type == Setting::Type::text) {
      k.key = s.text;
    } else if (s.type == Setting::Type::table && s.items.empty()) {
      Fields kf(fmt::format("{}.keys[{}]", f.what(), i + 1), decl.origin, s.fields);
      auto key = kf.text("key");
      if (!key) return pass(key);
      k.key = *key;
      auto pv = kf.text("pv", "");
      if (!pv) return pass(pv);
      k.pv = *pv;
      auto writable = kf.boolean("writable", false);
      if (!writable) return pass(writable);
      k.writable = *writable;
      auto units = kf.text("units", "");
      if (!units) return pass(units);
      k.units = *units;
      auto low = kf.number("low", 0);
      if (!low) return pass(low);
      auto high = kf.number("high", 0);
      if (!high) return pass(high);
      if (*low > *high) return tl::make_unexpected(kf.error(fmt::format("'low' {} is above 'high' {}", *low, *high)));
      k.low = *low;
      k.high = *high;
      auto precision = kf.integer("precision", 0, 17, 3);
      if (!precision) return pass(precision);
      k.precision = static_cast<int>(*precision);
      if (auto ok = kf.no_other_keys(kKeyPvKeys); !ok) return pass(ok);
    } else {
      return tl::make_unexpected(f.error(fmt::format("keys[{}]: a key name or a table {{ key = \"...\", writable = true }}, "
                                                     "not {}",
                                                     i + 1, s.type_name())));
    }
    if (k.key.empty()) return tl::make_unexpected(f.error(fmt::format("keys[{}]: the key's name is empty", i + 1)));
    if (k.pv.empty()) k.pv = pv_part_of(k.key);
    if (auto ok = unique_pv(k.pv, i, "keys"); !ok) return pass(ok);
    o.keys.push_back(std::move(k));
  }
  auto channels = list_items(f, decl.settings, "channels");
  if (!channels) return pass(channels);
  for (std::size_t i = 0; i < channels->size(); ++i) {
    const Setting& s = (*channels)[i];
    ChannelPv c;
    if (s.type == Setting::Type::text) {
      c.channel = s.text;
    } else if (s.type == Setting::Type::table && s.items.empty()) {
      Fields cf(fmt::format("{}.channels[{}]", f.what(), i + 1), decl.origin, s.fields);
      auto channel = cf.text("channel");
      if (!channel) return pass(channel);
      c.channel = *channel;
      auto pv = cf.text("pv", "");
      if (!pv) return pass(pv);
      c.pv = *pv;
      auto mode = cf.text("mode", "newest");
      if (!mode) return pass(mode);
      if (*mode != "newest" && *mode != "envelope")
        return tl::make_unexpected(cf.error(fmt::format("'mode' must be \"newest\" or \"envelope\", not \"{}\"", *mode)));
      c.mode = *mode;
      auto elements = cf.integer("elements", 0, kMaxWaveformElements, 0);
      if (!elements) return pass(elements);
      c.elements = static_cast<std::uint32_t>(*elements);
      if (auto ok = cf.no_other_keys(kChannelPvKeys); !ok) return pass(ok);
    } else {
      return tl::make_unexpected(f.error(fmt::format("channels[{}]: a channel name or a table {{ channel = \"...\", mode = "
                                                     "\"envelope\" }}, not {}",
                                                     i + 1, s.type_name())));
    }
    if (c.pv.empty()) c.pv = pv_part_of(c.channel);
    if (c.mode == "envelope" && c.elements == 0) c.elements = 1000;
    if (auto ok = unique_pv(c.pv, i, "channels"); !ok) return pass(ok);
    o.channels.push_back(std::move(c));
  }
  Fields& rest = f;
  for (const char* k : {"keys", "channels"}) (void)rest.table(k, false);  // read above; this takes them out
  auto status = rest.boolean("status", true);
  if (!status) return pass(status);
  o.status = *status;
  auto run_control = rest.boolean("run_control", pipeline.arena.controlled_runs);
  if (!run_control) return pass(run_control);
  if (*run_control && !pipeline.arena.controlled_runs)
    return tl::make_unexpected(rest.error("'run_control' needs runs = \"controlled\" in the arena"));
  o.run_control = *run_control;
  auto hz = rest.number("update_hz", 10);
  if (!hz) return pass(hz);
  if (!std::isfinite(*hz) || *hz <= 0 || *hz > 1000)
    return tl::make_unexpected(rest.error(fmt::format("'update_hz' must be above 0 and at most 1000, not {}", *hz)));
  o.update_hz = *hz;
  auto stall = rest.number("stall_s", 2);
  if (!stall) return pass(stall);
  if (!std::isfinite(*stall) || *stall <= 0)
    return tl::make_unexpected(rest.error(fmt::format("'stall_s' must be > 0, not {}", *stall)));
  o.stall_s = *stall;
  for (auto [key, env] : {std::pair{"server_port", "EPICS_CA_SERVER_PORT"}, std::pair{"pva_server_port", "EPICS_PVAS_SERVER_PORT"}}) {
    if (!rest.has(key)) continue;
    auto port = rest.integer(key, 1, 65535);
    if (!port) return pass(port);
    o.env[env] = std::to_string(*port);
  }
  auto pva = rest.boolean("pva", true);
  if (!pva) return pass(pva);
  o.pva = *pva;
  auto out = rest.text("out", "");
  if (!out) return pass(out);
  o.record_dir = *out;
  if (o.record_dir.empty() && !pipeline.records.empty()) o.record_dir = pipeline.records.front().out;
  if (auto ok = rest.no_other_keys(kServeKeys); !ok) return pass(ok);
  return o;
}

Result<void> check_serve(const config::Pipeline& pipeline) {
  for (const config::EpicsDecl& e : pipeline.epics) {
    auto o = serve_options(pipeline, e);
    if (!o) return pass(o);
  }
  return {};
}

}  // namespace weir::epics

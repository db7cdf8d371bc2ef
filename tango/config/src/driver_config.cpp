// driver "tango": its settings, read key by key through config::Fields, so every error names the
// file, the line, the part and the key.
#include "weir/tango/driver_config.hpp"

#include <array>
#include <cmath>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "weir/config/fields.hpp"
#include "weir/core/pv_log.hpp"

namespace weir::tango {

namespace {

using config::Fields;
using config::Setting;
using core::Result;

using controls::pass;

constexpr controls::ItemWords kWords{"attributes", "attribute", "an attribute", "attributes", "spectrum", "the device",
                                     "attribute log"};
constexpr std::array kDriverKeys{"attributes", "host", "database", "log", "log_block", "flush_ms", "connect_timeout_s",
                                 "poll_ms", "ping_ms", "timeout_ms", "queue", "duration_s"};
constexpr std::array kAttributeKeys{"attribute", "key", "channel", "poll_ms", "elements", "dtype", "rate", "ring", "units"};
constexpr std::string_view kTrlScheme = "tango://";
constexpr std::size_t kMaxNamePart = 255;

bool driver_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == '.' || c == '+';
}

std::string driver_shown(char c) {
  return c >= 0x20 && c < 0x7f ? std::string(1, c) : fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
}

std::vector<std::string> driver_split(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t from = 0;
  for (std::size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      out.emplace_back(s.substr(from, i - from));
      from = i + 1;
    }
  return out;
}

bool driver_valid_host(std::string_view host) {
  const auto colon = host.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == host.size()) return false;
  for (std::size_t i = colon + 1; i < host.size(); ++i)
    if (host[i] < '0' || host[i] > '9') return false;
  return host.substr(colon + 1).size() <= 5;
}

bool driver_device_name_ok(const std::string& name, std::string& why) {
  const std::vector<std::string> parts = driver_split(name, '/');
  if (parts.size() != 3) {
    why = "is not domain/family/member";
    return false;
  }
  for (const std::string& p : parts) {
    if (p.empty()) {
      why = "has an empty part; a device name is domain/family/member";
      return false;
    }
    if (p.size() > kMaxNamePart) {
      why = fmt::format("has a part of {} bytes; at most {}", p.size(), kMaxNamePart);
      return false;
    }
    for (const char c : p)
      if (!driver_name_char(c)) {
        why = fmt::format("has the character '{}'; device names use letters, digits and _-.+", driver_shown(c));
        return false;
      }
  }
  return true;
}

// The attribute `name` (plain or a full TRL) into device, attribute and the device's TRL.
Result<void> driver_parse_name(AttributeSpec& a, const std::string& host, bool database, const std::string& what,
                        const config::Origin& origin) {
  const auto refuse = [&](const std::string& why) {
    return tl::make_unexpected(config::error_at(origin, fmt::format("{}: attribute \"{}\" {}", what, a.name, why)));
  };
  std::string_view rest = a.name;
  std::string prefix, suffix;
  if (rest.substr(0, kTrlScheme.size()) == kTrlScheme) {
    rest.remove_prefix(kTrlScheme.size());
    const auto slash = rest.find('/');
    if (slash == std::string_view::npos || !driver_valid_host(rest.substr(0, slash)))
      return refuse("has no HOST:PORT after tango://");
    prefix = fmt::format("{}{}/", kTrlScheme, rest.substr(0, slash));
    rest.remove_prefix(slash + 1);
    if (const auto hash = rest.find('#'); hash != std::string_view::npos) {
      const std::string_view option = rest.substr(hash);
      if (option != "#dbase=no" && option != "#dbase=yes")
        return refuse(fmt::format("ends in \"{}\"; a TRL may end in #dbase=no or #dbase=yes", option));
      if (option == "#dbase=no") suffix = "#dbase=no";
      rest = rest.substr(0, hash);
    }
  } else if (!host.empty()) {
    prefix = fmt::format("{}{}/", kTrlScheme, host);
    if (!database) suffix = "#dbase=no";
  }
  const std::vector<std::string> parts = driver_split(rest, '/');
  if (parts.size() != 4)
    return refuse(fmt::format("is not domain/family/member/attribute ({} part{} where a device name is a/b/c and the "
                              "attribute's name follows it)",
                              parts.size(), parts.size() == 1 ? "" : "s"));
  a.device = parts[0] + "/" + parts[1] + "/" + parts[2];
  std::string why;
  if (!driver_device_name_ok(a.device, why)) return refuse(fmt::format("names the device \"{}\", which {}", a.device, why));
  a.attribute = parts[3];
  if (a.attribute.empty()) return refuse("has an empty attribute name");
  for (const char c : a.attribute)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
      return refuse(fmt::format("has the character '{}' in its attribute name; Tango attribute names use letters, "
                                "digits and _",
                                driver_shown(c)));
  a.trl = prefix + a.device + suffix;
  return {};
}

Result<AttributeSpec> driver_read_attribute(const std::string& what, const config::Origin& origin, const Setting& item,
                                     const std::string& host, bool database) {
  AttributeSpec a;
  if (item.type == Setting::Type::text) {
    a.name = item.text;
  } else if (item.type == Setting::Type::table && item.items.empty()) {
    Fields f(what, origin, item.fields);
    auto name = f.text("attribute");
    if (!name) return pass(name);
    a.name = *name;
    if (auto ok = controls::read_item_target(f, kWords, a.key, a); !ok) return pass(ok);
    if (f.has("poll_ms")) {
      auto poll = controls::read_period_ms(f, "poll_ms", 0, 1);
      if (!poll) return pass(poll);
      a.poll_ms = *poll;
    }
    if (auto ok = f.no_other_keys(kAttributeKeys); !ok) return pass(ok);
  } else {
    return tl::make_unexpected(config::error_at(origin, fmt::format("{}: an attribute is a name (\"sys/tg_test/1/"
                                                                    "double_scalar\") or a table ({{ attribute = \"...\", "
                                                                    "key = \"...\" }}), not {}",
                                                                    what, item.type_name())));
  }
  if (auto ok = driver_parse_name(a, host, database, what, origin); !ok) return pass(ok);
  if (a.channel.empty() && a.key.empty()) a.key = a.device + "/" + a.attribute;
  return a;
}

}  // namespace

Result<DriverOptions> driver_options(const config::DriverDecl& driver) {
  DriverOptions o;
  o.part = driver.name;
  Fields f = config::driver_fields(driver);
  if (driver.thread) return tl::make_unexpected(f.error("a Tango driver runs as a process of its own (weir-tango), not a thread"));
  if (!driver.channels.empty())
    return tl::make_unexpected(f.error("a Tango driver makes its channels from its attributes (channel = \"...\" on a "
                                       "spectrum attribute); leave out 'channels'"));
  auto host = f.text("host", "");
  if (!host) return pass(host);
  if (!host->empty() && !driver_valid_host(*host))
    return tl::make_unexpected(f.error(fmt::format("'host' = \"{}\" is not HOST:PORT", *host)));
  auto database = f.boolean("database", true);
  if (!database) return pass(database);
  if (!*database && host->empty())
    return tl::make_unexpected(f.error("'database' = false needs 'host' (the device server's HOST:PORT)"));
  if (driver.settings.count("attributes") == 0)
    return tl::make_unexpected(f.error("'attributes' is required: the attributes to follow, e.g. attributes = { "
                                       "\"sys/tg_test/1/double_scalar\" }"));
  auto items = controls::list_items(f, driver.settings, "attributes");
  if (!items) return pass(items);
  if (items->empty()) return tl::make_unexpected(f.error("'attributes' is empty: list the attributes to follow"));
  controls::ItemNames names(f, kWords);
  for (std::size_t i = 0; i < items->size(); ++i) {
    auto a = driver_read_attribute(fmt::format("{}.attributes[{}]", f.what(), i + 1), driver.origin, (*items)[i], *host, *database);
    if (!a) return pass(a);
    if (auto ok = names.add(i, a->trl + "/" + a->attribute, a->name, a->key, a->channel); !ok) return pass(ok);
    o.attributes.push_back(std::move(*a));
  }
  (void)f.table("attributes", false);  // read above from the raw settings; this takes it out
  if (auto ok = controls::read_driver_settings(f, kWords, driver.name + ".attrlog", names.channels(), o); !ok) return pass(ok);
  auto poll = controls::read_period_ms(f, "poll_ms", kDefaultFallbackPollMs, 1);
  if (!poll) return pass(poll);
  o.fallback_poll_ms = *poll;
  auto ping = controls::read_period_ms(f, "ping_ms", kDefaultPingMs, 10);
  if (!ping) return pass(ping);
  o.ping_ms = *ping;
  auto call = controls::read_period_ms(f, "timeout_ms", kDefaultTimeoutMs, 10);
  if (!call) return pass(call);
  o.timeout_ms = *call;
  if (auto ok = f.no_other_keys(kDriverKeys); !ok) return pass(ok);
  return o;
}

Result<std::vector<core::ChannelSpec>> driver_channels(const config::DriverDecl& driver) {
  if (driver.kind != "tango") return std::vector<core::ChannelSpec>{};
  auto o = driver_options(driver);
  if (!o) return pass(o);
  std::vector<core::ChannelSpec> out{controls::pv_log_channel_spec(*o)};
  for (const AttributeSpec& a : o->attributes)
    if (!a.channel.empty()) out.push_back(controls::frame_channel_spec(a, "spectrum"));
  return out;
}

Result<void> check_driver(const config::Pipeline& /*pipeline*/, const config::DriverDecl& driver) {
  auto o = driver_options(driver);
  if (!o) return pass(o);
  return {};
}

}  // namespace weir::tango

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

template <class T>
tl::unexpected<core::Error> driver_pass(const Result<T>& r) {
  return tl::make_unexpected(r.error());
}

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

Result<double> driver_period_ms(Fields& f, const char* key, double fallback, double lo) {
  auto v = f.number(key, fallback);
  if (!v) return v;
  if (!std::isfinite(*v) || *v < lo || *v > 3'600'000)
    return tl::make_unexpected(f.error(fmt::format("'{}' must be {} to 3600000 ms, not {}", key, lo, *v)));
  return v;
}

Result<AttributeSpec> driver_read_attribute(const std::string& what, const config::Origin& origin, const Setting& item,
                                     const std::string& host, bool database) {
  AttributeSpec a;
  if (item.type == Setting::Type::text) {
    a.name = item.text;
  } else if (item.type == Setting::Type::table && item.items.empty()) {
    Fields f(what, origin, item.fields);
    auto name = f.text("attribute");
    if (!name) return driver_pass(name);
    a.name = *name;
    for (auto [key, field] : {std::pair{"key", &a.key}, std::pair{"channel", &a.channel}, std::pair{"units", &a.units}}) {
      auto v = f.text(key, "");
      if (!v) return driver_pass(v);
      *field = *v;
    }
    if (!a.channel.empty() && !a.key.empty())
      return tl::make_unexpected(f.error("an attribute is a scalar (key) or a spectrum (channel), not both"));
    if (f.has("poll_ms")) {
      auto poll = driver_period_ms(f, "poll_ms", 0, 1);
      if (!poll) return driver_pass(poll);
      a.poll_ms = *poll;
    }
    if (a.channel.empty()) {
      for (const char* k : {"elements", "dtype", "rate", "ring"})
        if (f.has(k))
          return tl::make_unexpected(f.error(fmt::format("'{}' is for a spectrum attribute (with channel = \"...\")", k)));
      if (!a.units.empty())
        return tl::make_unexpected(f.error("'units' is for a spectrum attribute (with channel = \"...\"); a scalar's "
                                           "units come from the device"));
    } else {
      auto elements = f.integer("elements", 1, kMaxDriverSpectrumElements);
      if (!elements) return driver_pass(elements);
      a.elements = static_cast<std::uint32_t>(*elements);
      auto dtype = f.text("dtype", "f64");
      if (!dtype) return driver_pass(dtype);
      auto parsed = core::parse_dtype(*dtype);
      if (!parsed || *parsed == core::Dtype::c64)
        return tl::make_unexpected(f.error(fmt::format("'dtype' = \"{}\": a spectrum's elements are f64, f32, i64, i32, "
                                                       "u32, i16, u16, i8 or u8",
                                                       *dtype)));
      a.dtype = *parsed;
      auto rate = f.number("rate", 10);
      if (!rate) return driver_pass(rate);
      if (!std::isfinite(*rate) || *rate <= 0)
        return tl::make_unexpected(f.error(fmt::format("'rate' must be > 0 updates/s, not {}", *rate)));
      a.rate_hz = *rate;
      auto ring = f.integer("ring", 2, 1 << 20, kDefaultSpectrumRing);
      if (!ring) return driver_pass(ring);
      if ((*ring & (*ring - 1)) != 0)
        return tl::make_unexpected(f.error(fmt::format("'ring' must be a power of two, not {}", *ring)));
      a.ring = static_cast<std::uint32_t>(*ring);
    }
    if (auto ok = f.no_other_keys(kAttributeKeys); !ok) return driver_pass(ok);
  } else {
    return tl::make_unexpected(config::error_at(origin, fmt::format("{}: an attribute is a name (\"sys/tg_test/1/"
                                                                    "double_scalar\") or a table ({{ attribute = \"...\", "
                                                                    "key = \"...\" }}), not {}",
                                                                    what, item.type_name())));
  }
  if (auto ok = driver_parse_name(a, host, database, what, origin); !ok) return driver_pass(ok);
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
  if (!host) return driver_pass(host);
  if (!host->empty() && !driver_valid_host(*host))
    return tl::make_unexpected(f.error(fmt::format("'host' = \"{}\" is not HOST:PORT", *host)));
  auto database = f.boolean("database", true);
  if (!database) return driver_pass(database);
  if (!*database && host->empty())
    return tl::make_unexpected(f.error("'database' = false needs 'host' (the device server's HOST:PORT)"));
  auto it = driver.settings.find("attributes");
  if (it == driver.settings.end())
    return tl::make_unexpected(f.error("'attributes' is required: the attributes to follow, e.g. attributes = { "
                                       "\"sys/tg_test/1/double_scalar\" }"));
  std::vector<Setting> items;
  if (it->second.type == Setting::Type::text) items.push_back(it->second);
  else if (it->second.type == Setting::Type::table && it->second.fields.empty()) items = it->second.items;
  else
    return tl::make_unexpected(f.error(fmt::format("'attributes' must be a list (of names or tables), not {}",
                                                   it->second.type_name())));
  if (items.empty()) return tl::make_unexpected(f.error("'attributes' is empty: list the attributes to follow"));
  std::set<std::string> names, keys, channels;
  for (std::size_t i = 0; i < items.size(); ++i) {
    auto a = driver_read_attribute(fmt::format("{}.attributes[{}]", f.what(), i + 1), driver.origin, items[i], *host, *database);
    if (!a) return driver_pass(a);
    const std::string full = a->trl + "/" + a->attribute;
    if (!names.insert(full).second)
      return tl::make_unexpected(f.error(fmt::format("attribute \"{}\" is listed twice (attributes[{}])", a->name, i + 1)));
    if (!a->key.empty() && !keys.insert(a->key).second)
      return tl::make_unexpected(f.error(fmt::format("key '{}' is written by two attributes (attributes[{}])", a->key, i + 1)));
    if (!a->channel.empty() && !channels.insert(a->channel).second)
      return tl::make_unexpected(f.error(fmt::format("channel '{}' is written by two attributes (attributes[{}])",
                                                     a->channel, i + 1)));
    o.attributes.push_back(std::move(*a));
  }
  (void)f.table("attributes", false);  // read above from the raw settings; this takes it out
  auto log = f.text("log", driver.name + ".attrlog");
  if (!log) return driver_pass(log);
  o.log_channel = *log;
  if (channels.count(o.log_channel) != 0)
    return tl::make_unexpected(f.error(fmt::format("channel '{}' is both the attribute log and a spectrum's", o.log_channel)));
  auto block = f.integer("log_block", 1, 65536, kDefaultAttrLogBlock);
  if (!block) return driver_pass(block);
  o.log_block = static_cast<std::uint32_t>(*block);
  auto flush = driver_period_ms(f, "flush_ms", kDefaultAttrFlushMs, 1);
  if (!flush) return driver_pass(flush);
  o.flush_ms = *flush;
  auto timeout = f.number("connect_timeout_s", 5);
  if (!timeout) return driver_pass(timeout);
  if (!std::isfinite(*timeout) || *timeout <= 0)
    return tl::make_unexpected(f.error(fmt::format("'connect_timeout_s' must be > 0, not {}", *timeout)));
  o.connect_timeout_s = *timeout;
  auto poll = driver_period_ms(f, "poll_ms", kDefaultFallbackPollMs, 1);
  if (!poll) return driver_pass(poll);
  o.fallback_poll_ms = *poll;
  auto ping = driver_period_ms(f, "ping_ms", kDefaultPingMs, 10);
  if (!ping) return driver_pass(ping);
  o.ping_ms = *ping;
  auto call = driver_period_ms(f, "timeout_ms", kDefaultTimeoutMs, 10);
  if (!call) return driver_pass(call);
  o.timeout_ms = *call;
  auto queue = f.integer("queue", 1024, 1 << 24, kDefaultAttrQueueEntries);
  if (!queue) return driver_pass(queue);
  o.queue_entries = static_cast<std::uint32_t>(*queue);
  auto duration = f.number("duration_s", 0);
  if (!duration) return driver_pass(duration);
  o.duration_s = *duration;
  if (auto ok = f.no_other_keys(kDriverKeys); !ok) return driver_pass(ok);
  return o;
}

core::ChannelSpec log_channel_spec(const DriverOptions& options) {
  core::ChannelSpec c;
  c.name = options.log_channel;
  c.dtype = core::Dtype::u8;
  c.frame = core::pv_log_frame(options.log_block);
  c.samples_per_block = options.log_block * core::kPvLogEntryBytes;
  c.rate_hz = static_cast<double>(c.samples_per_block) * 1000.0 / options.flush_ms;  // a full block each flush, at most
  c.ring_blocks = 256;
  c.labels = {"pvlog"};
  return c;
}

core::ChannelSpec spectrum_channel_spec(const AttributeSpec& attribute) {
  core::ChannelSpec c;
  c.name = attribute.channel;
  c.dtype = attribute.dtype;
  c.units = attribute.units;
  c.samples_per_block = attribute.elements;
  c.rate_hz = attribute.rate_hz * attribute.elements;
  c.ring_blocks = attribute.ring;
  c.frame.frames_per_block = 1;
  c.frame.frame_elements = attribute.elements;
  c.frame.axis.name = "index";
  c.labels = {"spectrum"};
  return c;
}

Result<std::vector<core::ChannelSpec>> driver_channels(const config::DriverDecl& driver) {
  if (driver.kind != "tango") return std::vector<core::ChannelSpec>{};
  auto o = driver_options(driver);
  if (!o) return driver_pass(o);
  std::vector<core::ChannelSpec> out{log_channel_spec(*o)};
  for (const AttributeSpec& a : o->attributes)
    if (!a.channel.empty()) out.push_back(spectrum_channel_spec(a));
  return out;
}

Result<void> check_driver(const config::Pipeline& /*pipeline*/, const config::DriverDecl& driver) {
  auto o = driver_options(driver);
  if (!o) return driver_pass(o);
  return {};
}

}  // namespace weir::tango

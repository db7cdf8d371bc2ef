// Checks on InstrumentOptions that need no arena.
#include "weir/instrument/instrument_options.hpp"

#include <cmath>
#include <set>

#include <fmt/format.h>

#include "weir/instrument/command_format.hpp"
#include "weir/instrument/reply_parser.hpp"

namespace weir::acq {

const char* on_error_name(OnError on_error) noexcept {
  switch (on_error) {
    case OnError::skip: return "skip";
    case OnError::reconnect: return "reconnect";
  }
  return "?";
}

core::Result<OnError> parse_on_error(std::string_view text) {
  for (const OnError e : {OnError::skip, OnError::reconnect})
    if (text == on_error_name(e)) return e;
  return core::fail(core::Errc::invalid_argument, "on_error must be skip or reconnect, not '" + std::string(text) + "'");
}

const char* driver_kind(TransportKind transport) noexcept {
  switch (transport) {
    case TransportKind::tcp: return "scpi";
    case TransportKind::serial: return "serial";
  }
  return "?";
}

core::Result<void> validate(const InstrumentOptions& o) {
  const std::string who = std::string(driver_kind(o.transport)) + " '" + o.part + "': ";
  const auto refuse = [&](const std::string& why) { return core::fail(core::Errc::invalid_argument, who + why); };
  if (o.part.empty()) return core::fail(core::Errc::invalid_argument, std::string(driver_kind(o.transport)) + ": the part needs a name");
  switch (o.transport) {
    case TransportKind::tcp:
      if (o.host.empty()) return refuse("host is missing");
      if (o.port == 0) return refuse("port must be 1 to 65535");
      break;
    case TransportKind::serial:
      if (o.device.empty()) return refuse("device is missing (a tty path such as /dev/ttyUSB0)");
      if (auto ok = validate(o.serial); !ok) return refuse(ok.error().what);
      break;
  }
  if (auto ok = validate(o.framing); !ok) return refuse(ok.error().what);
  for (const auto& [name, value] : {std::pair{"connect_timeout", o.connect_timeout_s}, std::pair{"write_timeout", o.write_timeout_s},
                                    std::pair{"reply_timeout", o.reply_timeout_s}, std::pair{"read_timeout", o.read_timeout_s},
                                    std::pair{"reconnect_min", o.reconnect_min_s}, std::pair{"reconnect_max", o.reconnect_max_s},
                                    std::pair{"write_poll", o.write_poll_s}}) {
    if (!std::isfinite(value) || value <= 0) return refuse(fmt::format("{} must be > 0 s, not {}", name, value));
  }
  if (o.reconnect_max_s < o.reconnect_min_s)
    return refuse(fmt::format("reconnect_max ({} s) is shorter than reconnect_min ({} s)", o.reconnect_max_s, o.reconnect_min_s));
  if (!std::isfinite(o.duration_s) || o.duration_s < 0) return refuse(fmt::format("duration must be >= 0 s, not {}", o.duration_s));
  if (o.queries.empty() && o.writes.empty()) return refuse("has neither queries nor writes: nothing to do");
  if (o.script_memory_mb < 1 || o.script_memory_mb > kMaxScriptMemoryMb)
    return refuse(fmt::format("memory_mb must be 1 to {}, not {}", kMaxScriptMemoryMb, o.script_memory_mb));
  if (o.script_instructions < 0) return refuse(fmt::format("instructions must be >= 0 (0: unlimited), not {}", o.script_instructions));
  if (o.queries.size() > kMaxQueries || o.writes.size() > kMaxQueries)
    return refuse(fmt::format("at most {} queries and {} writes", kMaxQueries, kMaxQueries));

  std::set<std::string> written;  // keys this driver writes: each by one entry only
  const auto claim_key = [&](const std::string& key, const std::string& entry) -> core::Result<void> {
    if (key.empty()) return refuse(entry + ": key is missing");
    if (!written.insert(key).second) return refuse(entry + ": key '" + key + "' is written by another entry too");
    return {};
  };
  for (std::size_t i = 0; i < o.init.size(); ++i) {
    const std::string entry = fmt::format("init {}", i + 1);
    if (o.init[i].send.empty()) return refuse(entry + ": send is missing");
    if (!o.init[i].key.empty())
      if (auto ok = claim_key(o.init[i].key, entry + " ('" + o.init[i].send + "')"); !ok) return ok;
  }
  for (std::size_t i = 0; i < o.queries.size(); ++i) {
    const QuerySpec& q = o.queries[i];
    const std::string entry = fmt::format("query {} ('{}')", i + 1, q.send);
    if (q.send.empty()) return refuse(fmt::format("query {}: send is missing", i + 1));
    if (!std::isfinite(q.every_s) || q.every_s <= 0) return refuse(fmt::format("{}: every must be > 0 s, not {}", entry, q.every_s));
    if (auto ok = claim_key(q.key, entry); !ok) return ok;
    auto reply = parse_reply_spec(q.reply);
    if (!reply) return refuse(entry + ": " + reply.error().what);
    if (reply->kind == ReplyKind::lua && o.script.empty())
      return refuse(entry + ": reply '" + q.reply + "' needs the instrument's script = \"file.lua\"");
    if (!q.channel.empty() && reply->kind != ReplyKind::number && reply->kind != ReplyKind::lua)
      return refuse(entry + ": channel '" + q.channel + "' takes one number per reply; reply is '" + q.reply + "'");
  }
  for (std::size_t i = 0; i < o.writes.size(); ++i) {
    const WriteSpec& w = o.writes[i];
    const std::string entry = fmt::format("write {} ('{}')", i + 1, w.key);
    if (w.key.empty()) return refuse(fmt::format("write {}: key is missing", i + 1));
    if (w.send.empty()) return refuse(entry + ": send is missing");
    if (auto f = CommandFormat::parse(w.send); !f) return refuse(entry + ": " + f.error().what);
    if (written.count(w.key) != 0) return refuse(entry + ": key '" + w.key + "' is written by this driver itself");
    if (w.readback.empty() != w.key_readback.empty())
      return refuse(entry + ": readback and key_readback go together");
    if (!w.key_readback.empty()) {
      if (w.key_readback == w.key) return refuse(entry + ": key_readback must differ from key (it would forward itself)");
      if (auto ok = claim_key(w.key_readback, entry); !ok) return ok;
    }
  }
  for (const WriteSpec& w : o.writes)
    if (written.count(w.key) != 0) return refuse("write ('" + w.key + "'): key '" + w.key + "' is written by this driver itself");
  return {};
}

}  // namespace weir::acq

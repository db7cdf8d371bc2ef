// instrument_options(): a driver declaration's settings, read key by key through config::Fields.
#include "weir/instrument/instrument_config.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <limits>

#include <fmt/format.h>

#include "weir/config/fields.hpp"
#include "weir/instrument/lua_reply_parser.hpp"
#include "weir/instrument/reply_parser.hpp"

namespace weir::acq {

namespace {

using config::Fields;
using core::Result;

constexpr double kMsPerS = 1000.0;

constexpr std::array kQueryKeys{"send", "every", "key", "units", "reply", "channel"};
constexpr std::array kWriteKeys{"key", "send", "readback", "key_readback", "units"};
constexpr std::array kInitKeys{"send", "expect", "key"};
constexpr std::array kScpiKeys{"host", "port"};
constexpr std::array kSerialKeys{"device", "baud", "data_bits", "parity", "stop_bits", "flow"};
constexpr std::array kCommonKeys{"terminator", "in_terminator", "out_terminator", "max_reply", "timeout_ms",
                                 "connect_timeout_ms", "write_timeout_ms", "reply_timeout_ms", "read_timeout_ms",
                                 "on_error", "reconnect_min_ms", "reconnect_max_ms", "write_poll_ms", "script",
                                 "memory_mb", "instructions", "init", "queries", "writes"};

template <class T>
tl::unexpected<core::Error> pass(const Result<T>& r) {
  return tl::make_unexpected(r.error());
}

// A duration in ms (> 0), into seconds; absent: the fallback in seconds.
Result<double> millis(Fields& f, const std::string& key, double fallback_s) {
  auto ms = f.number(key, fallback_s * kMsPerS);
  if (!ms) return pass(ms);
  if (!std::isfinite(*ms) || *ms <= 0) return tl::make_unexpected(f.error(fmt::format("'{}' must be > 0 ms, not {}", key, *ms)));
  return *ms / kMsPerS;
}

Result<QuerySpec> read_query(Fields& f) {
  QuerySpec q;
  auto send = f.text("send");
  if (!send) return pass(send);
  if (send->empty()) return tl::make_unexpected(f.error("'send' is empty"));
  q.send = *send;
  auto every = f.number("every", kDefaultQueryEveryS);
  if (!every) return pass(every);
  if (!std::isfinite(*every) || *every <= 0)
    return tl::make_unexpected(f.error(fmt::format("'every' must be > 0 s, not {}", *every)));
  q.every_s = *every;
  auto key = f.text("key");
  if (!key) return pass(key);
  q.key = *key;
  auto units = f.text("units", "");
  if (!units) return pass(units);
  q.units = *units;
  auto reply = f.text("reply", "number");
  if (!reply) return pass(reply);
  if (auto spec = parse_reply_spec(*reply); !spec) return tl::make_unexpected(f.error(spec.error().what));
  q.reply = *reply;
  auto channel = f.text("channel", "");
  if (!channel) return pass(channel);
  q.channel = *channel;
  if (auto ok = f.no_other_keys(kQueryKeys); !ok) return pass(ok);
  return q;
}

Result<WriteSpec> read_write(Fields& f) {
  WriteSpec w;
  for (auto [key, field, required] : {std::tuple{"key", &w.key, true}, std::tuple{"send", &w.send, true},
                                      std::tuple{"readback", &w.readback, false},
                                      std::tuple{"key_readback", &w.key_readback, false},
                                      std::tuple{"units", &w.units, false}}) {
    auto v = required ? f.text(key) : f.text(key, "");
    if (!v) return pass(v);
    *field = *v;
  }
  if (auto ok = f.no_other_keys(kWriteKeys); !ok) return pass(ok);
  return w;
}

Result<std::vector<InitStep>> read_init(Fields& parent, std::optional<config::Setting> init) {
  std::vector<InitStep> steps;
  if (!init) return steps;
  const auto bad = [&](const std::string& why) { return tl::make_unexpected(parent.error(why)); };
  if (init->type == config::Setting::Type::text) init->items.push_back(*init);  // one command alone
  else if (init->type != config::Setting::Type::table || !init->fields.empty())
    return bad("'init' must be a list of commands: \"*RST\" or {send = \"*IDN?\", expect = \"...\", key = \"...\"}");
  for (std::size_t i = 0; i < init->items.size(); ++i) {
    config::Setting& item = init->items[i];
    if (item.type == config::Setting::Type::text) {
      if (item.text.empty()) return bad(fmt::format("init[{}] is an empty command", i + 1));
      steps.push_back(InitStep{item.text, {}, {}});
      continue;
    }
    if (item.type != config::Setting::Type::table || !item.items.empty())
      return bad(fmt::format("init[{}] must be a command or {{send = ..., expect = ..., key = ...}}, not {}", i + 1,
                             item.type_name()));
    Fields f(fmt::format("{}.init[{}]", parent.what(), i + 1), parent.origin(), std::move(item.fields));
    InitStep step;
    auto send = f.text("send");
    if (!send) return pass(send);
    step.send = *send;
    auto expect = f.text("expect", "");
    if (!expect) return pass(expect);
    step.expect = *expect;
    auto key = f.text("key", "");
    if (!key) return pass(key);
    step.key = *key;
    if (auto ok = f.no_other_keys(kInitKeys); !ok) return pass(ok);
    steps.push_back(std::move(step));
  }
  return steps;
}

}  // namespace

Result<InstrumentOptions> instrument_options(const config::DriverDecl& decl) {
  InstrumentOptions o;
  o.part = decl.name;
  Fields f = config::driver_fields(decl);
  std::vector<const char*> known(kCommonKeys.begin(), kCommonKeys.end());
  if (decl.kind == "scpi") {
    o.transport = TransportKind::tcp;
    known.insert(known.end(), kScpiKeys.begin(), kScpiKeys.end());
    auto host = f.text("host");
    if (!host) return pass(host);
    o.host = *host;
    auto port = f.integer("port", 1, 65535);
    if (!port) return pass(port);
    o.port = static_cast<std::uint16_t>(*port);
  } else if (decl.kind == "serial") {
    o.transport = TransportKind::serial;
    known.insert(known.end(), kSerialKeys.begin(), kSerialKeys.end());
    auto device = f.text("device");
    if (!device) return pass(device);
    o.device = *device;
    auto baud = f.integer("baud", 1, 4'000'000, 9600);
    if (!baud) return pass(baud);
    o.serial.baud = static_cast<std::uint32_t>(*baud);
    auto data_bits = f.integer("data_bits", 5, 8, 8);
    if (!data_bits) return pass(data_bits);
    o.serial.data_bits = static_cast<std::uint32_t>(*data_bits);
    auto stop_bits = f.integer("stop_bits", 1, 2, 1);
    if (!stop_bits) return pass(stop_bits);
    o.serial.stop_bits = static_cast<std::uint32_t>(*stop_bits);
    auto parity = f.text("parity", "none");
    if (!parity) return pass(parity);
    auto p = parse_parity(*parity);
    if (!p) return tl::make_unexpected(f.error(p.error().what));
    o.serial.parity = *p;
    auto flow = f.text("flow", "none");
    if (!flow) return pass(flow);
    auto fl = parse_flow_control(*flow);
    if (!fl) return tl::make_unexpected(f.error(fl.error().what));
    o.serial.flow = *fl;
    if (auto ok = validate(o.serial); !ok) return tl::make_unexpected(f.error(ok.error().what));
  } else {
    return tl::make_unexpected(f.error("is a " + decl.kind + " driver, not scpi or serial"));
  }

  auto terminator = f.text("terminator", "\n");
  if (!terminator) return pass(terminator);
  auto in_term = f.text("in_terminator", *terminator);
  if (!in_term) return pass(in_term);
  auto out_term = f.text("out_terminator", *terminator);
  if (!out_term) return pass(out_term);
  o.framing.in_terminator = *in_term;
  o.framing.out_terminator = *out_term;
  auto max_reply = f.integer("max_reply", 1, kMaxMaxReplyBytes, kDefaultMaxReplyBytes);
  if (!max_reply) return pass(max_reply);
  o.framing.max_reply_bytes = static_cast<std::uint32_t>(*max_reply);
  if (auto ok = validate(o.framing); !ok) return tl::make_unexpected(f.error(ok.error().what));

  auto timeout = millis(f, "timeout_ms", kDefaultReplyTimeoutS);
  if (!timeout) return pass(timeout);
  for (auto [key, field, fallback] : {std::tuple{"connect_timeout_ms", &o.connect_timeout_s, std::max(*timeout, kDefaultConnectTimeoutS)},
                                      std::tuple{"write_timeout_ms", &o.write_timeout_s, *timeout},
                                      std::tuple{"reply_timeout_ms", &o.reply_timeout_s, *timeout},
                                      std::tuple{"read_timeout_ms", &o.read_timeout_s, std::min(*timeout, kDefaultReadTimeoutS)},
                                      std::tuple{"reconnect_min_ms", &o.reconnect_min_s, kDefaultReconnectMinS},
                                      std::tuple{"reconnect_max_ms", &o.reconnect_max_s, kDefaultReconnectMaxS},
                                      std::tuple{"write_poll_ms", &o.write_poll_s, kDefaultWritePollS}}) {
    auto v = millis(f, key, fallback);
    if (!v) return pass(v);
    *field = *v;
  }
  auto on_error = f.text("on_error", "skip");
  if (!on_error) return pass(on_error);
  auto oe = parse_on_error(*on_error);
  if (!oe) return tl::make_unexpected(f.error(oe.error().what));
  o.on_error = *oe;
  auto script = f.text("script", "");
  if (!script) return pass(script);
  o.script = *script;
  if (!o.script.empty() && std::filesystem::path(o.script).is_relative())
    o.script = (std::filesystem::path(decl.origin.file).parent_path() / o.script).lexically_normal().string();
  auto memory_mb = f.integer("memory_mb", 1, kMaxScriptMemoryMb, kDefaultScriptMemoryMb);
  if (!memory_mb) return pass(memory_mb);
  o.script_memory_mb = static_cast<std::uint32_t>(*memory_mb);
  auto instructions = f.integer("instructions", 0, std::numeric_limits<int>::max(), kDefaultScriptInstructions);
  if (!instructions) return pass(instructions);
  o.script_instructions = static_cast<int>(*instructions);

  auto queries = f.items("queries", false);
  if (!queries) return pass(queries);
  for (Fields& q : *queries) {
    auto spec = read_query(q);
    if (!spec) return pass(spec);
    if (!spec->channel.empty() && std::find(decl.channels.begin(), decl.channels.end(), spec->channel) == decl.channels.end())
      return tl::make_unexpected(q.error("channel '" + spec->channel + "' is not among the driver's channels"));
    o.queries.push_back(std::move(*spec));
  }
  auto writes = f.items("writes", false);
  if (!writes) return pass(writes);
  for (Fields& w : *writes) {
    auto spec = read_write(w);
    if (!spec) return pass(spec);
    o.writes.push_back(std::move(*spec));
  }
  std::map<std::string, config::Setting> rest = f.take_rest();
  std::optional<config::Setting> init;
  if (auto it = rest.find("init"); it != rest.end()) {
    init = std::move(it->second);
    rest.erase(it);
  }
  Fields others(f.what(), f.origin(), std::move(rest));
  if (auto ok = others.no_other_keys(known); !ok) return pass(ok);
  auto steps = read_init(f, std::move(init));
  if (!steps) return pass(steps);
  o.init = std::move(*steps);

  if (auto ok = validate(o); !ok) return tl::make_unexpected(f.error(ok.error().what));
  return o;
}

Result<void> check_instrument_driver(const config::Pipeline& /*pipeline*/, const config::DriverDecl& decl) {
  auto options = instrument_options(decl);
  if (!options) return tl::make_unexpected(options.error());
  // Lua replies: the script loads and defines each function, as the driver will need at start.
  if (auto ok = check_lua_replies(*options); !ok)
    return tl::make_unexpected(config::error_at(decl.origin, "driver \"" + decl.name + "\": " + ok.error().what));
  return {};
}

}  // namespace weir::acq

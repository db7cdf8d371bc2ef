// The real `weir scpi` and `weir serial` against the fake instrument (fake_scpi.py) in another
// process: over loopback TCP, and over a socat pty pair. Values land in typed keys, faults are
// counted by kind, a dropped connection comes back by itself, and `weir set` reaches the supply.
#include <doctest/doctest.h>

#include <signal.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "background_weir.hpp"
#include "fake_instrument.hpp"
#include "json.hpp"
#include "live_arena.hpp"
#include "run_weir.hpp"
#include "scratch_dir.hpp"
#include "socat_pair.hpp"
#include "weir/core/kv_store.hpp"

using weir::test::BackgroundWeir;
using weir::test::contains;
using weir::test::eventually;
using weir::test::FakeInstrument;
using weir::test::run_weir;

namespace {

constexpr std::chrono::seconds kPatience{30};  // bound on waiting for the driver to get somewhere

// A pipeline file with one instrument driver `body` (the settings inside driver "KIND" { ... }).
std::string pipeline(const weir::test::ScratchDir& dir, const std::string& arena, const std::string& kind,
                     const std::string& body, const std::string& extra = "") {
  const std::string path = dir.file("instrument.lua");
  std::ofstream(path) << "arena { name = \"" << arena << "\", slots = 256, channels = 4, channel_mb = 4 }\n"
                      << extra << "driver \"" << kind << "\" { " << body << " }\n";
  return path;
}

double f64(const weir::core::Arena& arena, const std::string& key) {
  std::uint64_t bits = 0;
  weir::core::ValueType type = weir::core::ValueType::none;
  if (weir::core::KvStore(arena).get_scalar(key, bits, type) != weir::core::KvStatus::ok) return -1e300;
  if (type == weir::core::ValueType::u64) return static_cast<double>(bits);
  if (type != weir::core::ValueType::f64) return -1e300;
  double v = 0;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

std::uint64_t counter(const weir::core::Arena& arena, const std::string& key) {
  const double v = f64(arena, key);
  return v < 0 ? 0 : static_cast<std::uint64_t>(v);
}

std::string text(const weir::core::Arena& arena, const std::string& key) {
  std::vector<std::byte> buf(4096);
  weir::core::ValueInfo info;
  if (weir::core::KvStore(arena).get(key, buf, info) != weir::core::KvStatus::ok) return {};
  return std::string(reinterpret_cast<const char*>(buf.data()), info.length);
}

std::vector<double> array(const weir::core::Arena& arena, const std::string& key) {
  std::vector<std::byte> buf(4096);
  weir::core::ValueInfo info;
  if (weir::core::KvStore(arena).get(key, buf, info) != weir::core::KvStatus::ok ||
      info.type != weir::core::ValueType::array)
    return {};
  std::vector<double> out(info.length / sizeof(double));
  std::memcpy(out.data(), buf.data(), out.size() * sizeof(double));
  return out;
}

std::string dmm_settings(std::uint16_t port, const std::string& more = "") {
  return "name = \"dmm\", host = \"127.0.0.1\", port = " + std::to_string(port) +
         ", timeout_ms = 300, reconnect_min_ms = 50, reconnect_max_ms = 400,"
         " init = { \"*CLS\", {send = \"*IDN?\", expect = \"WEIR,FAKE-*\", key = \"dmm.idn\"} },"
         " queries = { {send = \"MEAS:VOLT?\", every = 0.05, key = \"dmm.volt\", units = \"V\"},"
         "             {send = \"MEAS:ARR?\", every = 0.1, key = \"dmm.arr\", reply = \"numbers\"} }" +
         more;
}

// Stops a driver with SIGINT and checks it left cleanly with its report.
void stop(BackgroundWeir& driver) {
  REQUIRE(driver.signal(SIGINT));
  CHECK(driver.wait_exit(std::chrono::seconds(30)) == 0);
  CHECK(contains(driver.output(), "stopped by a signal"));
}

}  // namespace

TEST_SUITE("acquisition.instrument.cli") {

TEST_CASE("weir scpi puts readings into typed keys with units, and the init reply into its key") {
  weir::test::ScratchDir dir("scpi");
  weir::test::ScratchArena arena("scpi");
  FakeInstrument dmm(dir, "dmm");
  const std::string file = pipeline(dir, arena.name(), "scpi", dmm_settings(dmm.port()));
  BackgroundWeir driver({"scpi", arena.name(), "--pipeline", file, "--part", "dmm"});
  const auto& a = arena.arena();
  REQUIRE_MESSAGE(eventually([&] { return f64(a, "dmm.volt") == 1.2345 && array(a, "dmm.arr").size() == 4; }, kPatience),
                  driver.output());
  CHECK(array(a, "dmm.arr") == std::vector<double>{1.2345, 2.469, 3.7035, 4.938});
  CHECK(text(a, "dmm.volt_units") == "V");
  CHECK(text(a, "dmm.idn") == "WEIR,FAKE-DMM,0,1.0");
  CHECK(text(a, "dmm.state") == "connected");
  dmm.control("FAKE:MEAS -0.5");
  CHECK(eventually([&] { return f64(a, "dmm.volt") == -0.5; }, kPatience));
  CHECK(counter(a, "dmm.replies") > 0);
  CHECK(counter(a, "dmm.mismatches") == 0);
  stop(driver);
  CHECK(text(a, "dmm.state") == "disconnected");
}

TEST_CASE("garbage replies count as mismatches, silence as timeouts, and values resume after both") {
  weir::test::ScratchDir dir("scpi");
  weir::test::ScratchArena arena("scpi");
  FakeInstrument dmm(dir, "dmm");
  const std::string file = pipeline(dir, arena.name(), "scpi", dmm_settings(dmm.port()));
  BackgroundWeir driver({"scpi", arena.name(), "--pipeline", file, "--part", "dmm"});
  const auto& a = arena.arena();
  REQUIRE(eventually([&] { return f64(a, "dmm.volt") == 1.2345; }, kPatience));
  dmm.control("FAKE:GARBAGE 3");
  REQUIRE_MESSAGE(eventually([&] { return counter(a, "dmm.mismatches") >= 3; }, kPatience), driver.output());
  CHECK(contains(driver.output(), "scpi 'dmm': reply to 'MEAS:"));
  CHECK(contains(driver.output(), "\"#?!garbage\""));
  dmm.control("FAKE:STALL 2");
  REQUIRE(eventually([&] { return counter(a, "dmm.timeouts") >= 2; }, kPatience));
  CHECK(contains(driver.output(), "no reply within 0.3 s"));
  dmm.control("FAKE:MEAS 2.5");
  CHECK(eventually([&] { return f64(a, "dmm.volt") == 2.5; }, kPatience));
  CHECK(counter(a, "dmm.disconnects") == 0);
  stop(driver);
}

TEST_CASE("a dropped connection is counted, reconnected with back-off, and values resume") {
  weir::test::ScratchDir dir("scpi");
  weir::test::ScratchArena arena("scpi");
  FakeInstrument dmm(dir, "dmm");
  const std::string file = pipeline(dir, arena.name(), "scpi", dmm_settings(dmm.port()));
  BackgroundWeir driver({"scpi", arena.name(), "--pipeline", file, "--part", "dmm"});
  const auto& a = arena.arena();
  REQUIRE(eventually([&] { return f64(a, "dmm.volt") == 1.2345; }, kPatience));
  dmm.control("FAKE:DROP 1");
  REQUIRE_MESSAGE(eventually([&] { return counter(a, "dmm.reconnects") >= 1; }, kPatience), driver.output());
  CHECK(counter(a, "dmm.disconnects") >= 1);
  dmm.control("FAKE:KICK");
  REQUIRE(eventually([&] { return counter(a, "dmm.reconnects") >= 2; }, kPatience));
  dmm.control("FAKE:MEAS 3.5");
  CHECK(eventually([&] { return f64(a, "dmm.volt") == 3.5 && text(a, "dmm.state") == "connected"; }, kPatience));
  CHECK(contains(driver.output(), "scpi 'dmm': tcp 127.0.0.1:" + std::to_string(dmm.port()) + " lost during"));
  stop(driver);
}

TEST_CASE("weir set forwards a setpoint that the supply then reports by read-back") {
  weir::test::ScratchDir dir("scpi");
  weir::test::ScratchArena arena("scpi");
  FakeInstrument psu(dir, "psu", {"--kind", "psu"});
  const std::string body = "name = \"psu\", host = \"localhost\", port = " + std::to_string(psu.port()) +
                           ", queries = { {send = \"MEAS:CURR?\", every = 0.2, key = \"psu.curr\", units = \"A\"} },"
                           " writes = { {key = \"psu.setpoint\", send = \"VOLT %.3f\", readback = \"VOLT?\","
                           " key_readback = \"psu.volt\", units = \"V\"} }, write_poll_ms = 20";
  const std::string file = pipeline(dir, arena.name(), "scpi", body);
  const auto& a = arena.arena();
  REQUIRE(run_weir({"set", arena.name(), "psu.setpoint", "9"}).exit_code == 0);  // before: never sent
  BackgroundWeir driver({"scpi", arena.name(), "--pipeline", file, "--part", "psu"});
  REQUIRE_MESSAGE(eventually([&] { return f64(a, "psu.curr") == 0.1; }, kPatience), driver.output());
  CHECK(counter(a, "psu.writes") == 0);
  CHECK(psu.control("VOLT?") == "0.0000");
  REQUIRE(run_weir({"set", arena.name(), "psu.setpoint", "1.5"}).exit_code == 0);
  REQUIRE_MESSAGE(eventually([&] { return f64(a, "psu.volt") == 1.5; }, kPatience), driver.output());
  CHECK(psu.control("VOLT?") == "1.5000");
  CHECK(text(a, "psu.volt_units") == "V");
  REQUIRE(run_weir({"set", arena.name(), "psu.setpoint", "2.25", "--type", "f64"}).exit_code == 0);
  CHECK(eventually([&] { return f64(a, "psu.volt") == 2.25; }, kPatience));
  REQUIRE(run_weir({"set", arena.name(), "psu.setpoint", "high"}).exit_code == 0);
  CHECK(eventually([&] { return counter(a, "psu.write_failures") == 1; }, kPatience));
  CHECK(eventually([&] { return contains(driver.output(), "key 'psu.setpoint' (text) does not fill \"VOLT %.3f\""); },
                   kPatience));  // the count is a key, the message a line of stderr read a moment later
  CHECK(counter(a, "psu.writes") == 2);
  stop(driver);
}

TEST_CASE("a reply that never ends is an error naming the part and the input, and the driver recovers") {
  weir::test::ScratchDir dir("scpi");
  weir::test::ScratchArena arena("scpi");
  FakeInstrument dmm(dir, "dmm");
  const std::string file = pipeline(dir, arena.name(), "scpi", dmm_settings(dmm.port(), ", max_reply = 64, on_error = \"reconnect\""));
  BackgroundWeir driver({"scpi", arena.name(), "--pipeline", file, "--part", "dmm"});
  const auto& a = arena.arena();
  REQUIRE(eventually([&] { return f64(a, "dmm.volt") == 1.2345; }, kPatience));
  dmm.control("FAKE:NOTERM 1");
  dmm.control("FAKE:MEAS 4.5");
  REQUIRE_MESSAGE(eventually([&] { return counter(a, "dmm.overlong") >= 1 && f64(a, "dmm.volt") == 4.5; }, kPatience),
                  driver.output());
  CHECK(contains(driver.output(), "scpi 'dmm': reply to 'MEAS:"));
  CHECK(contains(driver.output(), "?' on tcp 127.0.0.1:" + std::to_string(dmm.port()) +
                                      " ran past 64 bytes without its terminator \"\\n\""));
  CHECK(counter(a, "dmm.reconnects") >= 1);  // on_error = "reconnect": a clean line again
  stop(driver);
}

TEST_CASE("a host that refuses is counted and retried, with a message naming the part and the address") {
  weir::test::ScratchDir dir("scpi");
  weir::test::ScratchArena arena("scpi");
  std::uint16_t port = 0;
  {
    FakeInstrument gone(dir, "gone");
    port = gone.port();
  }  // killed: its port now refuses
  const std::string file = pipeline(dir, arena.name(), "scpi", dmm_settings(port));
  const auto r = run_weir({"scpi", arena.name(), "--pipeline", file, "--part", "dmm", "--duration", "1", "--json"});
  CHECK(r.exit_code == 0);
  CHECK(contains(r.err, "scpi 'dmm': tcp 127.0.0.1:" + std::to_string(port) + ": connect: Connection refused"));
  CHECK(counter(arena.arena(), "dmm.connect_failures") >= 1);
  CHECK(text(arena.arena(), "dmm.state") == "disconnected");
  const auto report = weir::test::parse_json(r.out);
  CHECK(report.at("replies").get<int>() == 0);
}

TEST_CASE("weir serial talks to the instrument through a pty pair, and comes back after the device vanishes") {
  weir::test::ScratchDir dir("serial");
  weir::test::ScratchArena arena("serial");
  auto pair = std::make_unique<weir::test::SocatPair>(dir);
  if (!pair->available()) {
    MESSAGE("SKIPPED: " << pair->why());
    return;
  }
  FakeInstrument gauge(dir, "gauge", {"--serial", pair->b(), "--terminator", "\\r\\n", "--kind", "gauge"});
  const std::string body = "name = \"gauge\", device = \"" + pair->a() +
                           "\", baud = 19200, parity = \"even\", data_bits = 7, stop_bits = 2, flow = \"none\","
                           " in_terminator = \"\\r\\n\", out_terminator = \"\\n\", timeout_ms = 300,"
                           " reconnect_min_ms = 50, reconnect_max_ms = 200,"
                           " queries = { {send = \"MEAS:VOLT?\", every = 0.05, key = \"gauge.p\", units = \"mbar\","
                           " channel = \"gauge.p\"} }";
  const std::string file = pipeline(dir, arena.name(), "serial", body + ", channels = {\"gauge.p\"}");
  BackgroundWeir driver({"serial", arena.name(), "--pipeline", file, "--part", "gauge"});
  const auto& a = arena.arena();
  REQUIRE_MESSAGE(eventually([&] { return f64(a, "gauge.p") == 1.2345 && counter(a, "gauge.samples") >= 3; }, kPatience),
                  std::string(driver.output() + gauge.output()));
  CHECK(text(a, "gauge.p_units") == "mbar");
  pair->unplug();
  REQUIRE_MESSAGE(eventually([&] { return counter(a, "gauge.disconnects") >= 1; }, kPatience), driver.output());
  CHECK(eventually([&] { return counter(a, "gauge.connect_failures") >= 1; }, kPatience));
  CHECK(contains(driver.output(), "serial 'gauge': serial " + pair->a() + ": open: No such file or directory"));
  pair = std::make_unique<weir::test::SocatPair>(dir);  // plugged in again, at the same paths
  REQUIRE(pair->available());
  gauge.control("FAKE:MEAS 7.25");
  CHECK_MESSAGE(eventually([&] { return f64(a, "gauge.p") == 7.25; }, kPatience), std::string(driver.output() + gauge.output()));
  CHECK(counter(a, "gauge.reconnects") >= 1);
  stop(driver);
}

TEST_CASE("bad instrument settings are refused by weir check with file:line, naming the part and the input") {
  weir::test::ScratchDir dir("scpi");
  const std::string arena = "t-never-made";
  const std::string q = "queries = { {send = \"MEAS:VOLT?\", key = \"v\"";
  struct Bad {
    std::string kind, body, says;
  };
  const std::vector<Bad> cases{
      {"scpi", "name = \"dmm\", host = \"h\", port = 5025, " + q + ", reply = \"float\"} }",
       "instrument.lua:2: driver \"dmm\".queries[1]: reply must be number, numbers, text or lua:FUNCTION, not 'float'"},
      {"scpi", "name = \"dmm\", host = \"h\", port = 5025, " + q + ", every = -1} }",
       "instrument.lua:2: driver \"dmm\".queries[1]: 'every' must be > 0 s, not -1"},
      {"scpi", "name = \"dmm\", host = \"h\", port = 5025, queries = { {key = \"v\"} }",
       "instrument.lua:2: driver \"dmm\".queries[1]: 'send' is required"},
      {"scpi", "name = \"dmm\", host = \"h\", port = 5025, " + q + "} }, on_eror = \"skip\"",
       "unknown key 'on_eror' (did you mean 'on_error'?)"},
      {"scpi", "name = \"dmm\", host = \"h\", port = 5025, " + q + "} }, writes = { {key = \"s\", send = \"V %g %g\"} }",
       "more than one conversion"},
      {"serial", "name = \"g\", device = \"/dev/ttyS0\", baud = 12345, " + q + "} }", "baud 12345 is not a rate"},
      {"serial", "name = \"g\", device = \"/dev/ttyS0\", parity = \"mark\", " + q + "} }",
       "parity must be none, even or odd, not 'mark'"},
      {"scpi", "name = \"dmm\", host = \"h\", port = 5025, " + q + ", reply = \"lua:parse\"} }",
       "needs the instrument's script = \"file.lua\""},
  };
  for (const Bad& c : cases) {
    CAPTURE(c.body);
    const std::string file = pipeline(dir, arena, c.kind, c.body);
    const auto r = run_weir({"check", file});
    CHECK(r.exit_code != 0);
    CHECK_MESSAGE(contains(r.err, c.says), r.err);
  }
}

TEST_CASE("a bad serial device and a missing Lua reply function are refused when the driver starts, by name") {
  weir::test::ScratchDir dir("serial");
  weir::test::ScratchArena arena("serial");
  const std::string q = "queries = { {send = \"MEAS:VOLT?\", key = \"v\"";
  const std::string missing = pipeline(dir, arena.name(), "serial",
                                       "name = \"g\", device = \"/dev/weir-no-such-tty\", " + q + "} }");
  const auto r = run_weir({"serial", arena.name(), "--pipeline", missing, "--part", "g", "--duration", "0.5"});
  CHECK(r.exit_code == 0);  // a device that is not there yet is waited for, and said so once
  CHECK(contains(r.err, "serial 'g': serial /dev/weir-no-such-tty: open: No such file or directory"));
  const auto wrong = run_weir({"scpi", arena.name(), "--pipeline", missing, "--part", "g"});
  CHECK(wrong.exit_code == 2);
  CHECK(contains(wrong.err, "driver \"g\" is a serial driver; run it with weir serial"));
  std::ofstream(dir.file("parse.lua")) << "function parse(line) return tonumber(line) end\n";
  const std::string lua = pipeline(dir, arena.name(), "scpi",
                                   "name = \"dmm\", host = \"127.0.0.1\", port = 1, script = \"parse.lua\", " + q +
                                       ", reply = \"lua:parsr\"} }");
  const auto l = run_weir({"scpi", arena.name(), "--pipeline", lua, "--part", "dmm", "--duration", "0.5"});
  CHECK(l.exit_code != 0);
  CHECK_MESSAGE(contains(l.err, "scpi 'dmm': query 'MEAS:VOLT?': " + dir.file("parse.lua") +
                                    " defines no global function 'parsr' (it is nil)"),
                l.err);
}

// A status line only a Lua function can take apart: "STAT:OK;VOLT:+1.234500E+00;TEMP:+23.50".
constexpr const char* kStatusParsers = R"lua(
function status_volts(reply) return tonumber(reply:match("VOLT:(%S+);")) end
function status_pair(reply)
  local v, t = reply:match("VOLT:(%S+);TEMP:(%S+)")
  return { tonumber(v), tonumber(t) }
end
function status_word(reply) return reply:match("STAT:(%a+)") end
function fails(reply) error("no sense in '" .. reply .. "'") end
function spins(reply) while true do end end
)lua";

TEST_CASE("weir scpi parses a structured reply with a Lua function into a number, a list and text") {
  weir::test::ScratchDir dir("scpi");
  weir::test::ScratchArena arena("scpi");
  FakeInstrument dmm(dir, "dmm");
  std::ofstream(dir.file("status.lua")) << kStatusParsers;
  const std::string file = pipeline(
      dir, arena.name(), "scpi",
      "name = \"dmm\", host = \"127.0.0.1\", port = " + std::to_string(dmm.port()) +
          ", timeout_ms = 300, script = \"status.lua\", channels = {\"dmm.stat_volt\"},"
          " queries = { {send = \"MEAS:STAT?\", every = 0.05, key = \"dmm.stat_volt\", units = \"V\","
          "              reply = \"lua:status_volts\", channel = \"dmm.stat_volt\"},"
          "             {send = \"MEAS:STAT?\", every = 0.05, key = \"dmm.stat_pair\", reply = \"lua:status_pair\"},"
          "             {send = \"MEAS:STAT?\", every = 0.05, key = \"dmm.stat_word\", reply = \"lua:status_word\"} }",
      "channel \"dmm.stat_volt\" { dtype = \"f64\", rate = 20, block = 1, ring = 64, units = \"V\" }\n");
  const auto checked = run_weir({"check", file});
  REQUIRE_MESSAGE(checked.exit_code == 0, checked.err);
  BackgroundWeir driver({"scpi", arena.name(), "--pipeline", file, "--part", "dmm"});
  const auto& a = arena.arena();
  REQUIRE_MESSAGE(eventually([&] { return f64(a, "dmm.stat_volt") == 1.2345 && text(a, "dmm.stat_word") == "OK" &&
                                           array(a, "dmm.stat_pair").size() == 2; },
                             kPatience),
                  driver.output());
  CHECK(array(a, "dmm.stat_pair") == std::vector<double>{1.2345, 23.5});
  CHECK(text(a, "dmm.stat_volt_units") == "V");
  dmm.control("FAKE:MEAS -0.75");
  CHECK(eventually([&] { return f64(a, "dmm.stat_volt") == -0.75; }, kPatience));
  CHECK(eventually([&] { return counter(a, "dmm.samples") > 0; }, kPatience));  // the number also fed the channel
  CHECK(counter(a, "dmm.mismatches") == 0);
  CHECK(counter(a, "dmm.parser_errors") == 0);
  dmm.control("FAKE:GARBAGE 2");  // "#?!garbage": status_volts finds no VOLT and returns nil
  CHECK_MESSAGE(eventually([&] { return counter(a, "dmm.mismatches") >= 2; }, kPatience), driver.output());
  stop(driver);
}

TEST_CASE("a Lua parser that errors or never ends is counted as a parser error, and the driver keeps going") {
  weir::test::ScratchDir dir("scpi");
  weir::test::ScratchArena arena("scpi");
  FakeInstrument dmm(dir, "dmm");
  std::ofstream(dir.file("status.lua")) << kStatusParsers;
  const std::string file = pipeline(
      dir, arena.name(), "scpi",
      "name = \"dmm\", host = \"127.0.0.1\", port = " + std::to_string(dmm.port()) +
          ", timeout_ms = 300, script = \"status.lua\", instructions = 100000, memory_mb = 8,"
          " queries = { {send = \"MEAS:VOLT?\", every = 0.05, key = \"dmm.volt\"},"
          "             {send = \"MEAS:STAT?\", every = 0.05, key = \"dmm.fails\", reply = \"lua:fails\"},"
          "             {send = \"MEAS:STAT?\", every = 0.05, key = \"dmm.spins\", reply = \"lua:spins\"} }");
  BackgroundWeir driver({"scpi", arena.name(), "--pipeline", file, "--part", "dmm"});
  const auto& a = arena.arena();
  REQUIRE_MESSAGE(eventually([&] { return counter(a, "dmm.parser_errors") >= 10 && f64(a, "dmm.volt") == 1.2345; },
                             kPatience),
                  driver.output());
  dmm.control("FAKE:MEAS 4.5");  // the plain query still works beside the failing ones
  CHECK(eventually([&] { return f64(a, "dmm.volt") == 4.5; }, kPatience));
  CHECK(counter(a, "dmm.disconnects") == 0);
  CHECK(counter(a, "dmm.mismatches") == 0);
  stop(driver);
  const std::string out = driver.output();
  CHECK_MESSAGE(contains(out, "scpi 'dmm': reply to 'MEAS:STAT?' on "), out);
  CHECK(contains(out, ": lua:fails failed on \"STAT:OK;"));
  CHECK_MESSAGE(contains(out, "status.lua:8: no sense in 'STAT:OK;"), out);
  CHECK(contains(text(a, "dmm.error"), "lua:"));
  CHECK(text(a, "dmm.fails").empty());
  CHECK(text(a, "dmm.spins").empty());
}

TEST_CASE("weir check refuses a missing script, a script that does not load and a missing function with file:line") {
  weir::test::ScratchDir dir("scpi");
  std::ofstream(dir.file("status.lua")) << kStatusParsers;
  std::ofstream(dir.file("broken.lua")) << "function status_volts(reply)\n  return = 1\nend\n";
  const std::string q = "queries = { {send = \"MEAS:STAT?\", key = \"v\", reply = \"lua:";
  struct Bad {
    std::string body, says;
  };
  const std::vector<Bad> cases{
      {"script = \"absent.lua\", " + q + "status_volts\"} }",
       "instrument.lua:2: driver \"dmm\": query 1 ('MEAS:STAT?'): reply 'lua:status_volts': cannot open " +
           dir.file("absent.lua")},
      {"script = \"broken.lua\", " + q + "status_volts\"} }",
       "instrument.lua:2: driver \"dmm\": query 1 ('MEAS:STAT?'): reply 'lua:status_volts': " + dir.file("broken.lua") +
           ":2:"},
      {"script = \"status.lua\", " + q + "status_vols\"} }",
       "instrument.lua:2: driver \"dmm\": query 1 ('MEAS:STAT?'): reply 'lua:status_vols': " + dir.file("status.lua") +
           " defines no global function 'status_vols' (it is nil)"},
      {"script = \"status.lua\", instructions = -1, " + q + "status_volts\"} }", "instrument.lua:2: driver \"dmm\""},
  };
  for (const Bad& c : cases) {
    CAPTURE(c.body);
    const std::string file = pipeline(dir, "t-never-made", "scpi", "name = \"dmm\", host = \"h\", port = 5025, " + c.body);
    const auto r = run_weir({"check", file});
    CHECK(r.exit_code != 0);
    CHECK_MESSAGE(contains(r.err, c.says), r.err);
  }
}

}  // TEST_SUITE

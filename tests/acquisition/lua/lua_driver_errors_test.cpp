// The lua driver survives its script: errors, endless loops, memory bombs and bad returns are
// counted in the arena and logged once each, and the calls around them run as usual.
#include <doctest/doctest.h>

#include <atomic>
#include <string>
#include <vector>

#include "live_arena.hpp"
#include "lua_driver_fixture.hpp"
#include "weir/acq_lua/lua_driver.hpp"

using namespace weir;
using namespace weir::test;

namespace {

struct Log {
  std::vector<std::string> lines;
  static void add(void* self, const char* line) { static_cast<Log*>(self)->lines.emplace_back(line); }
};

acq::LuaDriverOptions quick(const std::string& script, std::uint64_t calls) {
  acq::LuaDriverOptions o;
  o.part = "dev";
  o.script = script;
  o.period_s = 0.001;
  o.max_calls = calls;
  o.channels = {lua_channel("seq", 1000, 1)};
  return o;
}

std::size_t count_of(const std::vector<std::string>& lines, const std::string& part) {
  std::size_t n = 0;
  for (const auto& line : lines) n += contains(line, part) ? 1 : 0;
  return n;
}

}  // namespace

TEST_SUITE("acquisition.lua") {

TEST_CASE("errors, endless loops, memory bombs and bad returns are counted and the driver goes on") {
  ScratchDir dir("luadrv");
  const auto script = write_script(dir, "dev.lua", R"(
function acquire(n)
  if n == 3 then error("no reply from the device") end
  if n == 5 then while true do pcall(function() while true do end end) end end
  if n == 7 then local s = string.rep("x", 1 << 30) end
  if n == 9 then return { seq = {n, "high"} } end
  if n == 11 then return 42 end
  return { seq = n }
end)");
  ScratchArena arena("luadrv");
  acq::LuaDriverOptions o = quick(script, 12);
  o.instructions = 100000;
  o.memory_mb = 8;
  Log log;
  std::atomic<bool> stop{false};
  auto report = acq::run_lua_driver(arena.arena(), o, stop, &Log::add, &log);
  REQUIRE_MESSAGE(report, (report ? "" : report.error().what));
  CHECK(report->calls == 12);
  CHECK(report->errors == 5);
  CHECK(report->lua_errors == 1);
  CHECK(report->overruns == 1);
  CHECK(report->memory_errors == 1);
  CHECK(report->bad_returns == 2);
  CHECK(key_number(arena.arena(), "dev.calls") == 12.0);
  CHECK(key_number(arena.arena(), "dev.errors") == 5.0);
  CHECK(key_number(arena.arena(), "dev.lua_errors") == 1.0);
  CHECK(key_number(arena.arena(), "dev.overruns") == 1.0);
  CHECK(key_number(arena.arena(), "dev.memory_errors") == 1.0);
  CHECK(key_number(arena.arena(), "dev.bad_returns") == 2.0);
  CHECK(contains(key_bytes(arena.arena(), "dev.last_error"), "dev.lua: acquire: returned a number"));

  // Every good call's sample, in order; the failed calls gave none (a bad list is refused whole).
  CHECK(read_channel(arena.arena(), "seq").samples == std::vector<double>{1, 2, 4, 6, 8, 10, 12});

  REQUIRE(log.lines.size() == 5);
  CHECK(count_of(log.lines, "lua driver 'dev': ") == 5);
  CHECK(count_of(log.lines, "dev.lua:3: no reply from the device") == 1);
  CHECK(count_of(log.lines, "dev.lua:4: instruction budget of 100000 exceeded in one call") == 1);
  CHECK(count_of(log.lines, "dev.lua: not enough memory: the script's heap reached memory_mb = 8 MiB") == 1);
  CHECK(count_of(log.lines, "dev.lua: acquire: channel 'seq': element 2 is a string, not a number") == 1);
  CHECK(count_of(log.lines, "dev.lua: acquire: returned a number; return a table") == 1);
}

TEST_CASE("an error on every call is counted every time but logged once per message, at most 16") {
  ScratchDir dir("luadrv");
  const auto script = write_script(dir, "dev.lua", R"(
function acquire(n)
  if n <= 10 then error("the same") end
  error("number " .. n)
end)");
  ScratchArena arena("luadrv");
  Log log;
  std::atomic<bool> stop{false};
  auto report = acq::run_lua_driver(arena.arena(), quick(script, 40), stop, &Log::add, &log);
  REQUIRE_MESSAGE(report, (report ? "" : report.error().what));
  CHECK(report->lua_errors == 40);
  CHECK(key_number(arena.arena(), "dev.errors") == 40.0);
  CHECK(report->errors_logged == 16);
  REQUIRE(log.lines.size() == 17);
  CHECK(count_of(log.lines, "dev.lua:3: the same") == 1);
  CHECK(contains(log.lines.back(), "16 distinct errors logged; further ones are only counted (dev.errors)"));
  CHECK(contains(key_bytes(arena.arena(), "dev.last_error"), "dev.lua:4: number 40"));
}

TEST_CASE("a bad return names what is wrong, and the usable entries are still taken") {
  ScratchDir dir("luadrv");
  struct Probe {
    const char* returns;
    const char* problem;
  };
  const Probe probes[] = {
      {"true", "dev.lua: acquire: returned a boolean; return a table of channel samples and key values, or nil"},
      {"{ seq = 'high' }", "dev.lua: acquire: channel 'seq': a string is not a number or a list of numbers"},
      {"{ seq = {1, {}} }", "dev.lua: acquire: channel 'seq': element 2 is a table, not a number"},
      {"{ 5 }", "dev.lua: acquire: the returned table has a number as a name; name channels and keys with strings"},
      {"{ ['dev.k'] = true }", "dev.lua: acquire: key 'dev.k': a boolean is not a number, a string or a list of numbers"},
      {"{ ['dev.k'] = {} }", "dev.lua: acquire: key 'dev.k': a list of 0 numbers; an array key holds 1 to"},
      {"{ ['dev.k'] = {1, 'x'} }", "dev.lua: acquire: key 'dev.k': element 2 is a string, not a number"},
      {"{ [''] = 1 }", "dev.lua: acquire: key '':"},
  };
  for (const Probe& probe : probes) {
    const std::string returns = probe.returns;
    CAPTURE(returns);
    const auto script = write_script(dir, "dev.lua", "function acquire(n)\n  local r = " + returns +
                                                         "\n  if type(r) == 'table' then r['dev.good'] = n end\n  return r\nend");
    ScratchArena arena("luadrv");
    std::atomic<bool> stop{false};
    Log log;
    auto report = acq::run_lua_driver(arena.arena(), quick(script, 2), stop, &Log::add, &log);
    REQUIRE_MESSAGE(report, (report ? "" : report.error().what));
    CHECK(report->bad_returns == 2);
    CHECK(report->errors == 2);
    CHECK_MESSAGE(contains(key_bytes(arena.arena(), "dev.last_error"), probe.problem),
                  key_bytes(arena.arena(), "dev.last_error"));
    CHECK(log.lines.size() == 1);
    if (returns != "true") CHECK(key_number(arena.arena(), "dev.good") == 2.0);
  }
}

TEST_CASE("io, os.execute and load are not there, and __gc is refused, in a driver script") {
  ScratchDir dir("luadrv");
  struct Probe {
    const char* line;
    const char* error;
  };
  const Probe probes[] = {
      {"io.write('x')", "dev.lua:1: attempt to index a nil value (global 'io')"},
      {"os.execute('true')", "dev.lua:1: attempt to call a nil value (field 'execute')"},
      {"load('return 1')", "dev.lua:1: attempt to call a nil value (global 'load')"},
      {"setmetatable({}, {__gc = function() end})", "__gc is not allowed in a driver script"},
  };
  for (const Probe& probe : probes) {
    const std::string line = probe.line;
    CAPTURE(line);
    const auto script = write_script(dir, "dev.lua", "function acquire() " + line + " end");
    ScratchArena arena("luadrv");
    std::atomic<bool> stop{false};
    Log log;
    auto report = acq::run_lua_driver(arena.arena(), quick(script, 1), stop, &Log::add, &log);
    REQUIRE_MESSAGE(report, (report ? "" : report.error().what));
    CHECK(report->lua_errors == 1);
    CHECK_MESSAGE(contains(key_bytes(arena.arena(), "dev.last_error"), probe.error),
                  key_bytes(arena.arena(), "dev.last_error"));
  }
}

TEST_CASE("a script that does not load stops the driver before its first call, with file:line") {
  ScratchDir dir("luadrv");
  ScratchArena arena("luadrv");
  std::atomic<bool> stop{false};
  SUBCASE("a syntax error") {
    const auto script = write_script(dir, "dev.lua", "function acquire(n)\n  return { seq = = n }\nend");
    auto report = acq::run_lua_driver(arena.arena(), quick(script, 1), stop);
    REQUIRE_FALSE(report);
    CHECK_MESSAGE(contains(report.error().what, "lua driver 'dev': "), report.error().what);
    CHECK_MESSAGE(contains(report.error().what, "dev.lua:2: unexpected symbol near '='"), report.error().what);
  }
  SUBCASE("an error while the chunk runs") {
    const auto script = write_script(dir, "dev.lua", "local gain = 2\nlocal x = gain.value\nfunction acquire() end");
    auto report = acq::run_lua_driver(arena.arena(), quick(script, 1), stop);
    REQUIRE_FALSE(report);
    CHECK_MESSAGE(contains(report.error().what, "dev.lua:2: attempt to index a number value (local 'gain')"),
                  report.error().what);
  }
  SUBCASE("an endless loop in the chunk") {
    const auto script = write_script(dir, "dev.lua", "while true do end");
    acq::LuaDriverOptions o = quick(script, 1);
    o.instructions = 10000;
    auto report = acq::run_lua_driver(arena.arena(), o, stop);
    REQUIRE_FALSE(report);
    CHECK_MESSAGE(contains(report.error().what, "dev.lua:1: instruction budget of 10000 exceeded"), report.error().what);
  }
  SUBCASE("no such function") {
    const auto script = write_script(dir, "dev.lua", "function aquire() end");
    auto report = acq::run_lua_driver(arena.arena(), quick(script, 1), stop);
    REQUIRE_FALSE(report);
    CHECK_MESSAGE(contains(report.error().what, "dev.lua defines no global function 'acquire' (it is nil)"),
                  report.error().what);
  }
  SUBCASE("a missing file") {
    auto report = acq::run_lua_driver(arena.arena(), quick(dir.file("none.lua"), 1), stop);
    REQUIRE_FALSE(report);
    CHECK_MESSAGE(contains(report.error().what, "cannot open"), report.error().what);
    CHECK_MESSAGE(contains(report.error().what, "none.lua"), report.error().what);
  }
}

TEST_CASE("options out of range are refused naming the part and the setting") {
  acq::LuaDriverOptions o;
  o.part = "thermo";
  o.script = "dev.lua";
  SUBCASE("period") {
    o.period_s = 0;
    auto ok = acq::validate(o);
    REQUIRE_FALSE(ok);
    CHECK_MESSAGE(contains(ok.error().what, "lua driver 'thermo': period must be 0.0001 to 86400 seconds, not 0"),
                  ok.error().what);
  }
  SUBCASE("per block without channels") {
    o.mode = acq::LuaCallMode::per_block;
    auto ok = acq::validate(o);
    REQUIRE_FALSE(ok);
    CHECK(contains(ok.error().what, "lua driver 'thermo': per = \"block\" needs at least one channel"));
  }
  SUBCASE("a channel named twice") {
    o.channels = {lua_channel("t", 1, 1), lua_channel("t", 1, 1)};
    auto ok = acq::validate(o);
    REQUIRE_FALSE(ok);
    CHECK(contains(ok.error().what, "lua driver 'thermo': channel 't' is named twice"));
  }
  SUBCASE("memory") {
    o.memory_mb = 0;
    auto ok = acq::validate(o);
    REQUIRE_FALSE(ok);
    CHECK(contains(ok.error().what, "lua driver 'thermo': memory_mb must be 1 to 65536, not 0"));
  }
}

}  // TEST_SUITE

// `weir lua-driver` as its own process: another process reads the channel and keys it wrote back
// through core's public read API; failures are counted and it goes on; a script that does not load
// and bad pipeline settings end it with exit 1 and a message naming them.
#include <doctest/doctest.h>

#include <signal.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "background_weir.hpp"
#include "json.hpp"
#include "live_arena.hpp"
#include "lua_driver_fixture.hpp"
#include "run_weir.hpp"

using namespace weir;
using namespace weir::test;

namespace {

std::size_t occurrences(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_SUITE("acquisition.lua.cli") {

TEST_CASE("weir lua-driver feeds a known sequence that another process reads back") {
  ScratchDir dir("luacli");
  const auto script = write_script(dir, "seq.lua", R"(
function acquire(n, t)
  return { seq = {3 * n - 2, 3 * n - 1, 3 * n}, ["dev.last"] = n, ["dev.state"] = n % 2 == 0 and "even" or "odd" }
end)");
  ScratchArena arena("luacli");
  const RunResult r = run_weir({"lua-driver", arena.name(), "--script", script, "--part", "dev", "--period", "0.01",
                                "--channels", "seq", "--block", "5", "--rate", "600", "--calls", "20", "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto json = parse_json(r.out);
  REQUIRE(json.is_object());
  CHECK(json["calls"] == 20);
  CHECK(json["errors"] == 0);
  CHECK(json["channels"][0]["samples"] == 60);
  CHECK(json["channels"][0]["blocks_published"] == 12);

  const ChannelBack back = read_channel(arena.arena(), "seq");
  REQUIRE(back.blocks.size() == 12);
  std::vector<double> expected;
  for (int i = 1; i <= 60; ++i) expected.push_back(i);
  CHECK(back.samples == expected);
  CHECK(key_number(arena.arena(), "dev.last") == 20.0);
  CHECK(key_bytes(arena.arena(), "dev.state") == "even");
  CHECK(key_number(arena.arena(), "dev.calls") == 20.0);
  CHECK(key_number(arena.arena(), "dev.errors") == 0.0);
}

TEST_CASE("weir lua-driver counts a failing and an endless script, logs each message once, and goes on") {
  ScratchDir dir("luacli");
  const auto script = write_script(dir, "dev.lua", R"(
function acquire(n)
  if n % 3 == 0 then error("no answer") end
  if n == 5 then while true do end end
  return { v = n }
end)");
  ScratchArena arena("luacli");
  const RunResult r = run_weir({"lua-driver", arena.name(), "--script", script, "--period", "0.002", "--channels", "v",
                                "--calls", "12", "--instructions", "100000", "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto json = parse_json(r.out);
  REQUIRE(json.is_object());
  CHECK(json["calls"] == 12);
  CHECK(json["lua_errors"] == 4);
  CHECK(json["overruns"] == 1);
  CHECK(json["errors"] == 5);
  CHECK(occurrences(r.err, "lua driver 'lua': ") == 2);
  CHECK(occurrences(r.err, "dev.lua:3: no answer") == 1);
  CHECK(occurrences(r.err, "dev.lua:4: instruction budget of 100000 exceeded in one call") == 1);
  CHECK(key_number(arena.arena(), "lua.errors") == 5.0);
  CHECK(key_number(arena.arena(), "lua.overruns") == 1.0);
  CHECK(read_channel(arena.arena(), "v").samples == std::vector<double>{1, 2, 4, 7, 8, 10, 11});
}

TEST_CASE("weir lua-driver stops on SIGINT and publishes its partly filled block") {
  ScratchDir dir("luacli");
  const auto script = write_script(dir, "dev.lua", "function acquire(n) return { v = n } end");
  ScratchArena arena("luacli");
  BackgroundWeir driver({"lua-driver", arena.name(), "--script", script, "--period", "0.05", "--channels", "v",
                         "--block", "4096", "--json"});  // a tick skipped late would close the block: keep them improbable
  REQUIRE(eventually([&] { return key_number(arena.arena(), "lua.calls") >= 3; }, std::chrono::seconds(20)));
  REQUIRE(driver.signal(SIGINT));
  REQUIRE(driver.wait_exit(std::chrono::seconds(20)) == 0);
  const double calls = key_number(arena.arena(), "lua.calls");
  const ChannelBack back = read_channel(arena.arena(), "v");
  REQUIRE(back.blocks.size() == 1);
  CHECK(static_cast<double>(back.samples.size()) == calls);
  CHECK(back.samples.back() == calls);
  CHECK(contains(driver.output(), "\"stopped\":true"));
}

TEST_CASE("weir lua-driver exits 1 with file:line for a script that does not load") {
  ScratchDir dir("luacli");
  const auto script = write_script(dir, "dev.lua", "function acquire(n)\n  return { v = = n }\nend");
  ScratchArena arena("luacli");
  const RunResult r = run_weir({"lua-driver", arena.name(), "--script", script, "--period", "0.1", "--channels", "v"});
  CHECK(r.exit_code == kExitError);
  CHECK_MESSAGE(contains(r.err, "dev.lua:2: unexpected symbol near '='"), r.err);
  const RunResult usage = run_weir({"lua-driver", arena.name(), "--period", "0.1"});
  CHECK(usage.exit_code == kExitUsage);
  CHECK_MESSAGE(contains(usage.err, "--script"), usage.err);
}

TEST_CASE("a pipeline's lua driver runs by its name, and bad settings name it") {
  ScratchDir dir("luacli");
  write_script(dir, "dev.lua", "function read(n) return { temp = 20 + n } end");
  ScratchArena arena("luacli");
  const auto pipeline = [&](const std::string& settings) {
    const std::string path = dir.file("lab.lua");
    std::ofstream(path) << "arena { name = \"" << arena.name() << "\", attach = true }\n"
                        << "channel \"temp\" { dtype = \"f64\", rate = 100, block = 2 }\n"
                        << "driver \"lua\" { name = \"thermo\", channels = {\"temp\"}, " << settings << " }\n";
    return path;
  };
  const std::string good = pipeline("script = \"dev.lua\", call = \"read\", period = 0.005");
  const RunResult r = run_weir({"lua-driver", arena.name(), "--pipeline", good, "--part", "thermo", "--calls", "6", "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(read_channel(arena.arena(), "temp").samples == std::vector<double>{21, 22, 23, 24, 25, 26});
  CHECK(key_number(arena.arena(), "thermo.calls") == 6.0);

  const RunResult other = run_weir({"lua-driver", arena.name(), "--pipeline", good, "--part", "nope"});
  CHECK(other.exit_code == kExitError);
  CHECK_MESSAGE(contains(other.err, "no driver \"lua\" named 'nope'"), other.err);

  const std::string bad = pipeline("script = \"dev.lua\", call = \"read\", period = -1");
  const RunResult refused = run_weir({"lua-driver", arena.name(), "--pipeline", bad, "--part", "thermo"});
  CHECK(refused.exit_code == kExitError);
  CHECK_MESSAGE(contains(refused.err, "lab.lua:3: lua driver 'thermo': period must be"), refused.err);
  const RunResult check = run_weir({"check", bad});
  CHECK(check.exit_code != 0);
  const std::string said = check.out + check.err;
  CHECK_MESSAGE(contains(said, "lab.lua:3: lua driver 'thermo': period must be"), said);
}

}  // TEST_SUITE

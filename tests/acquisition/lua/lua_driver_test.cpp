// The lua driver in process, with a real Lua state and a real arena: a script's returns become
// channel blocks and keys, in order, timed as documented.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "live_arena.hpp"
#include "lua_driver_fixture.hpp"
#include "weir/acq_lua/lua_driver.hpp"

using namespace weir;
using namespace weir::test;

namespace {

acq::LuaDriverOptions quick(const std::string& script, std::uint64_t calls) {
  acq::LuaDriverOptions o;
  o.part = "dev";
  o.script = script;
  o.period_s = 0.01;  // a tick skipped late would be a gap block: keep them improbable
  o.max_calls = calls;
  return o;
}

}  // namespace

TEST_SUITE("acquisition.lua") {

TEST_CASE("samples fill blocks across calls in order, and keys take numbers, text and lists") {
  ScratchDir dir("luadrv");
  const auto script = write_script(dir, "seq.lua", R"(
function acquire(n, t)
  return { seq = {2 * n - 1, 2 * n}, ["dev.n"] = n, ["dev.name"] = "call " .. n, ["dev.pair"] = {n, -n} }
end)");
  ScratchArena arena("luadrv");
  acq::LuaDriverOptions o = quick(script, 11);
  o.channels = {lua_channel("seq", 500, 4)};
  std::atomic<bool> stop{false};
  auto report = acq::run_lua_driver(arena.arena(), o, stop);
  REQUIRE_MESSAGE(report, (report ? "" : report.error().what));
  CHECK(report->calls == 11);
  CHECK(report->errors == 0);
  CHECK(report->keys_written == 33);
  REQUIRE(report->channels.size() == 1);
  CHECK(report->channels[0].created);
  CHECK(report->channels[0].samples == 22);
  CHECK(report->channels[0].blocks_published == 6);  // five full blocks and the partial one at the end

  const ChannelBack back = read_channel(arena.arena(), "seq");
  REQUIRE(back.blocks.size() == 6);
  std::vector<double> expected;
  for (int i = 1; i <= 22; ++i) expected.push_back(i);
  CHECK(back.samples == expected);
  for (std::size_t k = 0; k < back.blocks.size(); ++k) {
    CHECK(back.blocks[k].first_sample == 4 * k);
    CHECK(back.blocks[k].samples == (k < 5 ? 4U : 2U));
    if (k > 0) CHECK(back.blocks[k].monotonic_ns > back.blocks[k - 1].monotonic_ns);
  }
  CHECK(key_number(arena.arena(), "dev.n") == 11.0);
  CHECK(key_bytes(arena.arena(), "dev.name") == "call 11");
  core::ValueInfo info;
  const std::string pair = key_bytes(arena.arena(), "dev.pair", &info);
  REQUIRE(info.type == core::ValueType::array);
  CHECK(info.array.elem == core::Dtype::f64);
  CHECK(info.array.dims[0] == 2);
  REQUIRE(pair.size() == 2 * sizeof(double));
  double values[2] = {};
  std::memcpy(values, pair.data(), sizeof values);
  CHECK(values[0] == 11.0);
  CHECK(values[1] == -11.0);
  CHECK(key_number(arena.arena(), "dev.calls") == 11.0);
  CHECK(key_number(arena.arena(), "dev.errors") == 0.0);
}

TEST_CASE("a list of samples from one call is spaced by the channel's rate") {
  ScratchDir dir("luadrv");
  const auto script = write_script(dir, "burst.lua", "function acquire(n) return { burst = {1, 2, 3, 4, 5, 6, 7, 8} } end");
  ScratchArena arena("luadrv");
  acq::LuaDriverOptions o = quick(script, 1);
  o.channels = {lua_channel("burst", 100, 4)};  // 10 ms between samples
  std::atomic<bool> stop{false};
  auto report = acq::run_lua_driver(arena.arena(), o, stop);
  REQUIRE_MESSAGE(report, (report ? "" : report.error().what));
  const ChannelBack back = read_channel(arena.arena(), "burst");
  REQUIRE(back.blocks.size() == 2);
  CHECK(back.blocks[1].monotonic_ns - back.blocks[0].monotonic_ns == 40'000'000);
  CHECK(back.blocks[1].realtime_ns - back.blocks[0].realtime_ns == 40'000'000);
}

TEST_CASE("per block, one call per block period, each block stamped with its nominal time") {
  ScratchDir dir("luadrv");
  const auto script = write_script(dir, "ramp.lua", R"(
local out = {}
function acquire(n, t)
  local block = weir.channels.ramp.block
  for i = 1, block do out[i] = (n - 1) * block + i - 1 end
  return { ramp = out, ["dev.t"] = t }
end)");
  ScratchArena arena("luadrv");
  acq::LuaDriverOptions o = quick(script, 6);
  o.mode = acq::LuaCallMode::per_block;
  o.channels = {lua_channel("ramp", 1000, 10)};  // a block every 10 ms
  std::atomic<bool> stop{false};
  auto report = acq::run_lua_driver(arena.arena(), o, stop);
  REQUIRE_MESSAGE(report, (report ? "" : report.error().what));
  CHECK(report->calls == 6);
  const ChannelBack back = read_channel(arena.arena(), "ramp");
  REQUIRE(back.blocks.size() == 6);
  std::vector<double> expected;
  for (int i = 0; i < 60; ++i) expected.push_back(i);
  CHECK(back.samples == expected);
  for (std::size_t k = 0; k < back.blocks.size(); ++k) {
    CHECK(back.blocks[k].monotonic_ns - back.blocks[0].monotonic_ns == k * 10'000'000);
    CHECK(back.blocks[k].realtime_ns - back.blocks[0].realtime_ns == k * 10'000'000);
  }
  CHECK(key_number(arena.arena(), "dev.t") == doctest::Approx(0.05));
}

TEST_CASE("per block refuses channels with different block periods") {
  ScratchDir dir("luadrv");
  const auto script = write_script(dir, "x.lua", "function acquire() end");
  ScratchArena arena("luadrv");
  acq::LuaDriverOptions o = quick(script, 1);
  o.mode = acq::LuaCallMode::per_block;
  o.channels = {lua_channel("a", 1000, 10), lua_channel("b", 1000, 20)};
  std::atomic<bool> stop{false};
  auto report = acq::run_lua_driver(arena.arena(), o, stop);
  REQUIRE_FALSE(report);
  CHECK_MESSAGE(contains(report.error().what, "lua driver 'dev': per = \"block\" needs channels with one block period"),
                report.error().what);
}

TEST_CASE("integer channels round and clip samples, counting the clipped ones") {
  ScratchDir dir("luadrv");
  const auto script = write_script(dir, "adc.lua", "function acquire() return { adc = {1.4, 1.6, -2.5, -40000, 40000, 0/0} } end");
  ScratchArena arena("luadrv");
  acq::LuaDriverOptions o = quick(script, 1);
  o.channels = {lua_channel("adc", 10, 6, core::Dtype::i16)};
  std::atomic<bool> stop{false};
  auto report = acq::run_lua_driver(arena.arena(), o, stop);
  REQUIRE_MESSAGE(report, (report ? "" : report.error().what));
  CHECK(report->channels[0].saturated == 3);
  const ChannelBack back = read_channel(arena.arena(), "adc");
  CHECK(back.samples == std::vector<double>{1, 2, -2, -32768, 32767, 0});
}

TEST_CASE("the weir table describes the part and its channels while the file loads") {
  ScratchDir dir("luadrv");
  const auto script = write_script(dir, "info.lua", R"(
local info = weir.part .. " " .. weir.period .. " " .. tostring(weir.per_block) .. " " ..
             weir.channels.v.rate .. " " .. weir.channels.v.block .. " " .. weir.channels.v.dtype
function acquire() return { ["dev.info"] = info } end)");
  ScratchArena arena("luadrv");
  acq::LuaDriverOptions o = quick(script, 1);
  o.period_s = 0.25;
  o.channels = {lua_channel("v", 4, 2)};
  std::atomic<bool> stop{false};
  auto report = acq::run_lua_driver(arena.arena(), o, stop);
  REQUIRE_MESSAGE(report, (report ? "" : report.error().what));
  CHECK(key_bytes(arena.arena(), "dev.info") == "dev 0.25 false 4.0 2 f64");
}

TEST_CASE("a channel that exists is attached as it is; a missing one without a rate is refused") {
  ScratchDir dir("luadrv");
  const auto script = write_script(dir, "one.lua", "function acquire(n) return { v = n } end");
  ScratchArena arena("luadrv");
  REQUIRE(core::create_channel(arena.arena(), lua_channel("v", 50, 3)));
  acq::LuaDriverOptions o = quick(script, 7);
  core::ChannelSpec by_name;
  by_name.name = "v";
  by_name.rate_hz = 0;
  by_name.samples_per_block = 0;
  o.channels = {by_name};
  std::atomic<bool> stop{false};
  auto report = acq::run_lua_driver(arena.arena(), o, stop);
  REQUIRE_MESSAGE(report, (report ? "" : report.error().what));
  CHECK_FALSE(report->channels[0].created);
  const ChannelBack back = read_channel(arena.arena(), "v");
  REQUIRE(back.blocks.size() == 3);
  CHECK(back.blocks[0].samples == 3);
  CHECK(back.samples == std::vector<double>{1, 2, 3, 4, 5, 6, 7});

  by_name.name = "w";
  o.channels = {by_name};
  auto missing = acq::run_lua_driver(arena.arena(), o, stop);
  REQUIRE_FALSE(missing);
  CHECK_MESSAGE(contains(missing.error().what, "lua driver 'dev': channel 'w' does not exist"), missing.error().what);
}

TEST_CASE("a call that ends past later deadlines skips them, counted, and the grid holds") {
  ScratchDir dir("luadrv");
  // The first call spins for 60 ms of CPU time, so at least 60 ms of wall time: ticks 1 to 5 of a
  // 10 ms grid are past when it returns, and tick 6 at the earliest is called next.
  const auto script = write_script(dir, "slow.lua", R"(
function acquire(n, t)
  if n == 1 then local t0 = os.clock() while os.clock() - t0 < 0.06 do end end
  return { ["dev.t" .. n] = t }
end)");
  ScratchArena arena("luadrv");
  acq::LuaDriverOptions o = quick(script, 3);
  o.period_s = 0.01;
  o.instructions = 0;
  std::atomic<bool> stop{false};
  auto report = acq::run_lua_driver(arena.arena(), o, stop);
  REQUIRE_MESSAGE(report, (report ? "" : report.error().what));
  CHECK(report->late >= 4);
  CHECK(key_number(arena.arena(), "dev.late") == static_cast<double>(report->late));
  CHECK(key_number(arena.arena(), "dev.t1") == 0.0);
  const double t2 = key_number(arena.arena(), "dev.t2");
  CHECK(t2 >= 0.05);
  // Still on the grid: a whole number of periods, and the next call one period later.
  CHECK(std::abs(t2 / 0.01 - std::round(t2 / 0.01)) < 1e-6);
  CHECK(key_number(arena.arena(), "dev.t3") == doctest::Approx(t2 + 0.01));
}

TEST_CASE("a stop flag already set ends the run before the first call") {
  ScratchDir dir("luadrv");
  const auto script = write_script(dir, "x.lua", "function acquire() return { v = 1 } end");
  ScratchArena arena("luadrv");
  acq::LuaDriverOptions o = quick(script, 0);
  o.channels = {lua_channel("v", 10, 1)};
  std::atomic<bool> stop{true};
  auto report = acq::run_lua_driver(arena.arena(), o, stop);
  REQUIRE_MESSAGE(report, (report ? "" : report.error().what));
  CHECK(report->stopped);
  CHECK(report->calls == 0);
  CHECK(key_number(arena.arena(), "dev.calls") == 0.0);
}

}  // TEST_SUITE

// Scripts that fail: refused at configure, or caught per block, counted, and survived.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "lua_test_util.hpp"

namespace {

using weir::shard_test::FakeHost;
using weir::test::LuaShardUnderTest;
using weir::test::ScriptDir;

constexpr std::uint32_t kBlock = 64;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_SUITE("dsp_shards.lua.errors") {

TEST_CASE("a syntax error refuses configure with file and line") {
  ScriptDir dir;
  const auto script = dir.write("script.lua", {"function process(block)", "  local x = = 1", "end"});
  LuaShardUnderTest shard({{"script", script}});
  REQUIRE_FALSE(shard.ok());
  CHECK_MESSAGE(contains(shard.error(), "script.lua:2:"), shard.error());
  CHECK_MESSAGE(contains(shard.error(), "unexpected symbol"), shard.error());
}

TEST_CASE("an error while the chunk runs refuses configure with file and line") {
  ScriptDir dir;
  SUBCASE("runtime error") {
    const auto script = dir.write("script.lua", {"local scale = 2", "local x = nil + scale", "function process() end"});
    LuaShardUnderTest shard({{"script", script}});
    REQUIRE_FALSE(shard.ok());
    CHECK_MESSAGE(contains(shard.error(), "script.lua:2: attempt to perform arithmetic on a nil value"),
                  shard.error());
  }
  SUBCASE("io at load time") {
    const auto script = dir.write("script.lua", {"io.write('hello')", "function process() end"});
    LuaShardUnderTest shard({{"script", script}});
    REQUIRE_FALSE(shard.ok());
    CHECK_MESSAGE(contains(shard.error(), "script.lua:1: attempt to index a nil value (global 'io')"), shard.error());
  }
  SUBCASE("an endless loop at load time") {
    const auto script = dir.write("script.lua", {"while true do end", "function process() end"});
    LuaShardUnderTest shard({{"script", script}, {"instructions", "10000"}});
    REQUIRE_FALSE(shard.ok());
    CHECK_MESSAGE(contains(shard.error(), "script.lua:1: instruction budget of 10000 exceeded"), shard.error());
  }
  SUBCASE("writing an output at load time") {
    const auto script = dir.write("script.lua", {"weir.set('k', 1)", "function process() end"});
    LuaShardUnderTest shard({{"script", script}, {"outputs", "key:k"}});
    REQUIRE_FALSE(shard.ok());
    CHECK_MESSAGE(contains(shard.error(), "script.lua:1: weir.set: outputs can only be written inside"), shard.error());
  }
}

TEST_CASE("a script without the per-block function refuses configure naming it") {
  ScriptDir dir;
  const auto script = dir.write("script.lua", {"function on_block(block) end", "process = 3"});
  SUBCASE("default name") {
    LuaShardUnderTest shard({{"script", script}});
    REQUIRE_FALSE(shard.ok());
    CHECK_MESSAGE(contains(shard.error(), "defines no global function 'process' (it is number)"), shard.error());
  }
  SUBCASE("named by the function parameter") {
    LuaShardUnderTest shard({{"script", script}, {"function", "on_block"}});
    CHECK_MESSAGE(shard.ok(), shard.error());
  }
  SUBCASE("a missing name") {
    LuaShardUnderTest shard({{"script", script}, {"function", "on_blok"}});
    REQUIRE_FALSE(shard.ok());
    CHECK_MESSAGE(contains(shard.error(), "defines no global function 'on_blok' (it is nil)"), shard.error());
  }
}

TEST_CASE("a runtime error on block 3 is reported with its line, counted, and later blocks run") {
  ScriptDir dir;
  const auto script = dir.write("script.lua", {
                                                  "function process(block)",
                                                  "  weir.set('seq', block.sequence)",
                                                  "  if block.sequence == 3 then",
                                                  "    error('bad block ' .. block.sequence)",
                                                  "  end",
                                                  "end",
                                              });
  LuaShardUnderTest shard({{"script", script}, {"outputs", "key:seq"}});
  REQUIRE_MESSAGE(shard.ok(), shard.error());
  CHECK(shard.last_error().empty());
  FakeHost host;
  const std::vector<float> samples(kBlock, 1.0F);
  std::vector<int> results;
  for (std::uint64_t seq = 1; seq <= 5; ++seq) results.push_back(shard.process(host, samples.data(), kBlock, seq));
  CHECK(results == std::vector<int>{0, 0, WEIR_LUA_SCRIPT_ERROR, 0, 0});
  CHECK_MESSAGE(contains(shard.last_error(), "script.lua:4: bad block 3"), shard.last_error());
  CHECK_MESSAGE(contains(shard.last_error(), "stack traceback:"), shard.last_error());
  CHECK(host.key_writes[0].size() == 5);  // block 3 wrote its key before it failed
  CHECK(host.f64(0) == 5.0);
  const auto stats = shard.stats();
  CHECK(stats.blocks == 5);
  CHECK(stats.script_errors == 1);
  REQUIRE(host.logs.size() == 1);
  CHECK(contains(host.logs[0], "script.lua:4: bad block 3"));
}

TEST_CASE("each distinct error message reaches the host's log once") {
  ScriptDir dir;
  const auto script = dir.write("script.lua", {
                                                  "function process(block)",
                                                  "  if block.sequence < 10 then error('low') end",
                                                  "  local t = nil",
                                                  "  return t.field",
                                                  "end",
                                              });
  LuaShardUnderTest shard({{"script", script}});
  REQUIRE_MESSAGE(shard.ok(), shard.error());
  FakeHost host;
  const std::vector<float> samples(kBlock, 1.0F);
  for (std::uint64_t seq = 0; seq < 20; ++seq) {
    CHECK(shard.process(host, samples.data(), kBlock, seq) == WEIR_LUA_SCRIPT_ERROR);
  }
  REQUIRE(host.logs.size() == 2);
  CHECK(contains(host.logs[0], "script.lua:2: low"));
  CHECK(contains(host.logs[1], "script.lua:4: attempt to index a nil value (local 't')"));
  CHECK(shard.stats().script_errors == 20);
  CHECK(shard.stats().errors_logged == 2);
}

TEST_CASE("an endless loop is stopped by the instruction budget and the shard goes on") {
  ScriptDir dir;
  std::string script;
  SUBCASE("a plain loop") {
    script = dir.write("script.lua", {
                                         "function process(block)",
                                         "  if block.sequence == 2 then",
                                         "    while true do end",
                                         "  end",
                                         "  weir.set('seq', block.sequence)",
                                         "end",
                                     });
  }
  SUBCASE("a loop that catches its own stop with pcall") {
    script = dir.write("script.lua", {
                                         "function process(block)",
                                         "  if block.sequence == 2 then",
                                         "    while true do pcall(function() while true do end end) end",
                                         "  end",
                                         "  weir.set('seq', block.sequence)",
                                         "end",
                                     });
  }
  LuaShardUnderTest shard({{"script", script}, {"outputs", "key:seq"}, {"instructions", "100000"}});
  REQUIRE_MESSAGE(shard.ok(), shard.error());
  FakeHost host;
  const std::vector<float> samples(kBlock, 1.0F);
  std::vector<int> results;
  for (std::uint64_t seq = 1; seq <= 4; ++seq) results.push_back(shard.process(host, samples.data(), kBlock, seq));
  CHECK(results == std::vector<int>{0, WEIR_LUA_BUDGET_EXCEEDED, 0, 0});
  CHECK_MESSAGE(contains(shard.last_error(), "script.lua:3: instruction budget of 100000 exceeded in one block"),
                shard.last_error());
  CHECK(shard.stats().budget_stops == 1);
  CHECK(host.f64(0) == 4.0);
  CHECK(host.key_writes[0].size() == 3);
}

TEST_CASE("an allocation bomb is stopped by the memory limit and the shard goes on") {
  ScriptDir dir;
  std::string script;
  SUBCASE("many small allocations") {
    script = dir.write("script.lua", {
                                         "function process(block)",
                                         "  if block.sequence == 1 then",
                                         "    local hoard, i = {}, 0",
                                         "    while true do i = i + 1; hoard[i] = string.rep('x', 1000) .. i end",
                                         "  end",
                                         "  weir.set('seq', block.sequence)",
                                         "end",
                                     });
  }
  SUBCASE("one huge allocation") {
    script = dir.write("script.lua", {
                                         "function process(block)",
                                         "  if block.sequence == 1 then local s = string.rep('x', 1 << 30) end",
                                         "  weir.set('seq', block.sequence)",
                                         "end",
                                     });
  }
  // The budget is a safety net only: a broken memory limit would show as a budget stop.
  LuaShardUnderTest shard(
      {{"script", script}, {"outputs", "key:seq"}, {"memory_mb", "4"}, {"instructions", "2000000"}});
  REQUIRE_MESSAGE(shard.ok(), shard.error());
  FakeHost host;
  const std::vector<float> samples(kBlock, 1.0F);
  CHECK(shard.process(host, samples.data(), kBlock, 1) == WEIR_LUA_OUT_OF_MEMORY);
  CHECK_MESSAGE(contains(shard.last_error(), "script.lua: not enough memory: the script's heap reached memory_mb = 4"),
                shard.last_error());
  CHECK(shard.process(host, samples.data(), kBlock, 2) == 0);
  CHECK(host.f64(0) == 2.0);
  const auto stats = shard.stats();
  CHECK(stats.memory_errors == 1);
  CHECK(stats.heap_peak_bytes <= 4U << 20);
  CHECK(stats.heap_bytes <= 4U << 20);
}

TEST_CASE("endless recursion fails the block with a stack overflow and the shard goes on") {
  ScriptDir dir;
  const auto script = dir.write("script.lua", {
                                                  "local function deeper(n) return deeper(n + 1) + 1 end",
                                                  "function process(block)",
                                                  "  if block.sequence == 1 then deeper(0) end",
                                                  "  weir.set('seq', block.sequence)",
                                                  "end",
                                              });
  LuaShardUnderTest shard({{"script", script}, {"outputs", "key:seq"}});
  REQUIRE_MESSAGE(shard.ok(), shard.error());
  FakeHost host;
  const std::vector<float> samples(kBlock, 1.0F);
  CHECK(shard.process(host, samples.data(), kBlock, 1) == WEIR_LUA_SCRIPT_ERROR);
  CHECK_MESSAGE(contains(shard.last_error(), "script.lua:1: stack overflow"), shard.last_error());
  CHECK(shard.process(host, samples.data(), kBlock, 2) == 0);
  CHECK(host.f64(0) == 2.0);
}

TEST_CASE("io, os.execute, require and the file loaders are not there") {
  ScriptDir dir;
  struct Probe {
    const char* line;
    const char* error;
  };
  const Probe probes[] = {
      {"  io.write('x')", "script.lua:2: attempt to index a nil value (global 'io')"},
      {"  os.execute('true')", "script.lua:2: attempt to call a nil value (field 'execute')"},
      {"  require('socket')", "script.lua:2: attempt to call a nil value (global 'require')"},
      {"  dofile('/etc/passwd')", "script.lua:2: attempt to call a nil value (global 'dofile')"},
      {"  loadfile('/etc/passwd')", "script.lua:2: attempt to call a nil value (global 'loadfile')"},
      {"  load('return 1')", "script.lua:2: attempt to call a nil value (global 'load')"},
      {"  print('x')", "script.lua:2: attempt to call a nil value (global 'print')"},
      {"  debug.traceback()", "script.lua:2: attempt to index a nil value (global 'debug')"},
      {"  package.loadlib('x', 'y')", "script.lua:2: attempt to index a nil value (global 'package')"},
      {"  string.dump(process)", "script.lua:2: attempt to call a nil value (field 'dump')"},
      {"  setmetatable({}, {__gc = function() end})", "setmetatable: __gc is not allowed in a shard script"},
  };
  for (const Probe& probe : probes) {
    const std::string line = probe.line;
    CAPTURE(line);
    const auto script = dir.write("script.lua", {"function process(block)", probe.line, "end"});
    LuaShardUnderTest shard({{"script", script}});
    REQUIRE_MESSAGE(shard.ok(), shard.error());
    FakeHost host;
    const std::vector<float> samples(kBlock, 1.0F);
    CHECK(shard.process(host, samples.data(), kBlock, 1) == WEIR_LUA_SCRIPT_ERROR);
    CHECK_MESSAGE(contains(shard.last_error(), probe.error), shard.last_error());
  }
  SUBCASE("os.clock and os.time remain") {
    const auto script = dir.write("script.lua", {"function process(block)",
                                                 "  weir.set('t', (os.time() > 0 and os.clock() >= 0) and 1 or 0)",
                                                 "end"});
    LuaShardUnderTest shard({{"script", script}, {"outputs", "key:t"}});
    REQUIRE_MESSAGE(shard.ok(), shard.error());
    FakeHost host;
    const std::vector<float> samples(kBlock, 1.0F);
    CHECK(shard.process(host, samples.data(), kBlock, 1) == 0);
    CHECK(host.f64(0) == 1.0);
  }
}

TEST_CASE("misused outputs fail the block with an error naming them") {
  ScriptDir dir;
  struct Probe {
    const char* line;
    const char* error;
  };
  const Probe probes[] = {
      {"  weir.set('adc0.nope', 1)", "script.lua:2: weir.set: 'adc0.nope' is not a declared output"},
      {"  weir.set('adc0.ch', 1)", "script.lua:2: weir.set: 'adc0.ch' is a channel output; use weir.emit"},
      {"  weir.emit('adc0.k', block)", "script.lua:2: weir.emit: 'adc0.k' is a key output; use weir.set"},
      {"  weir.set('adc0.k', {})", "script.lua:2: bad argument #2 to 'set' (number expected, got table)"},
      {"  weir.emit('adc0.ch', {1, 2, 'x'})", "script.lua:2: weir.emit: element 3 is a string, not a number"},
      {"  local t = {} for i = 1, 65 do t[i] = i end weir.emit('adc0.ch', t)",
       "script.lua:2: weir.emit: 65 values exceed the block size 64 of 'adc0.ch'"},
      {"  weir.sum(42)", "script.lua:2: bad argument #1 to 'sum' (block view or table expected, got number)"},
      {"  block[1] = 3", "script.lua:2: the block view is read-only"},
      {"  local x = block.sequense", "script.lua:2: the block view has no field 'sequense'"},
  };
  for (const Probe& probe : probes) {
    const std::string line = probe.line;
    CAPTURE(line);
    const auto script = dir.write("script.lua", {"function process(block)", probe.line, "end"});
    LuaShardUnderTest shard({{"script", script}, {"outputs", "key:adc0.k,channel:adc0.ch"}});
    REQUIRE_MESSAGE(shard.ok(), shard.error());
    FakeHost host;
    const std::vector<float> samples(kBlock, 1.0F);
    CHECK(shard.process(host, samples.data(), kBlock, 1) == WEIR_LUA_SCRIPT_ERROR);
    CHECK_MESSAGE(contains(shard.last_error(), probe.error), shard.last_error());
    CHECK(host.published.empty());
  }
}

TEST_CASE("a claim the arena drops makes weir.emit return false and is counted") {
  ScriptDir dir;
  const auto script = dir.write("script.lua", {"function process(block)",
                                               "  weir.set('ok', weir.emit('adc0.copy', block) and 1 or 0)", "end"});
  LuaShardUnderTest shard({{"script", script}, {"outputs", "channel:adc0.copy,key:ok"}});
  REQUIRE_MESSAGE(shard.ok(), shard.error());
  FakeHost host;
  host.drop_all = true;
  const std::vector<float> samples(kBlock, 1.0F);
  CHECK(shard.process(host, samples.data(), kBlock, 1) == 0);
  CHECK(host.f64(1) == 0.0);
  CHECK(host.published.empty());
  CHECK(shard.stats().emits_dropped == 1);
}

}  // TEST_SUITE

// The lua shard's parameters: the table the host reads, and what configure refuses.
#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "lua_test_util.hpp"

namespace {

using weir::test::LuaShardUnderTest;
using weir::test::ScriptDir;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_SUITE("dsp_shards.lua.params") {

TEST_CASE("the entry returns the lua table only for the host's ABI version") {
  const weir_shard_api* api = weir_builtin_lua(WEIR_SHARD_ABI_VERSION);
  REQUIRE(api != nullptr);
  CHECK(api->abi_version == WEIR_SHARD_ABI_VERSION);
  CHECK(api->struct_size == sizeof(weir_shard_api));
  CHECK(std::string(api->name) == "lua");
  REQUIRE(api->param_count == 5);
  CHECK(std::string(api->params[0].name) == "script");
  CHECK(api->params[0].default_value == nullptr);
  CHECK(std::string(api->params[1].default_value) == "process");
  CHECK(std::string(api->params[3].name) == "memory_mb");
  CHECK(std::string(api->params[4].default_value) == "10000000");
  CHECK((api->input_dtypes & (1U << WEIR_DTYPE_I16)) != 0);
  CHECK((api->input_dtypes & (1U << WEIR_DTYPE_F64)) != 0);
  CHECK((api->input_dtypes & (1U << WEIR_DTYPE_C64)) == 0);
  CHECK(weir_builtin_lua(WEIR_SHARD_ABI_VERSION + 1) == nullptr);
}

TEST_CASE("a missing script parameter is refused by name") {
  LuaShardUnderTest shard({{"outputs", "key:x"}});
  REQUIRE_FALSE(shard.ok());
  CHECK_MESSAGE(contains(shard.error(), "parameter 'script' is required"), shard.error());
}

TEST_CASE("an unreadable script is refused naming its path") {
  ScriptDir dir;
  SUBCASE("no such file") {
    LuaShardUnderTest shard({{"script", "/nonexistent/weir/peak.lua"}});
    REQUIRE_FALSE(shard.ok());
    CHECK_MESSAGE(contains(shard.error(), "cannot open /nonexistent/weir/peak.lua"), shard.error());
  }
  SUBCASE("a binary chunk") {
    const auto script = dir.write("compiled.lua", {"\x1bLua"});
    LuaShardUnderTest shard({{"script", script}});
    REQUIRE_FALSE(shard.ok());
    CHECK_MESSAGE(contains(shard.error(), "attempt to load a binary chunk"), shard.error());
  }
}

TEST_CASE("a bad outputs declaration is refused naming the entry") {
  ScriptDir dir;
  const auto script = dir.write("script.lua", {"function process(block) end"});
  struct Case {
    const char* outputs;
    const char* error;
  };
  const Case cases[] = {
      {"key:a,foo:b", "outputs: entry 2 'foo:b': unknown kind 'foo' (expected key, keybytes, array or channel)"},
      {"adc0.peak", "outputs: entry 1 'adc0.peak': expected KIND:NAME"},
      {"key:", "outputs: entry 1 'key:': empty name"},
      {"key:a,,key:b", "outputs: entry 2 '': expected KIND:NAME"},
      {"keybytes:state", "outputs: entry 1 'keybytes:state': expected keybytes:NAME:MAXBYTES"},
      {"keybytes:state:0", "MAXBYTES '0' is not an integer in [1, 1048576]"},
      {"keybytes:state:12x", "MAXBYTES '12x' is not an integer"},
      {"array:hist", "outputs: entry 1 'array:hist': expected array:NAME:N"},
      {"array:hist:0", "N '0' is not an integer in [1, 131072]"},
      {"channel:adc0 x", "name 'adc0 x' holds a blank or ':'"},
      {"key:a,channel:a", "outputs: entry 2 'channel:a': name declared twice"},
      {"key:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "name longer than 63 bytes"},
  };
  for (const Case& c : cases) {
    const std::string outputs = c.outputs;
    CAPTURE(outputs);
    LuaShardUnderTest shard({{"script", script}, {"outputs", c.outputs}});
    REQUIRE_FALSE(shard.ok());
    CHECK_MESSAGE(contains(shard.error(), c.error), shard.error());
  }
  SUBCASE("33 outputs are one too many") {
    std::string many;
    for (int i = 0; i < 33; ++i) many += (i > 0 ? ",key:k" : "key:k") + std::to_string(i);
    LuaShardUnderTest shard({{"script", script}, {"outputs", many}});
    REQUIRE_FALSE(shard.ok());
    CHECK_MESSAGE(contains(shard.error(), "entry 33 'key:k32': more than 32 outputs"), shard.error());
  }
}

TEST_CASE("numeric parameters are parsed and range-checked") {
  ScriptDir dir;
  const auto script = dir.write("script.lua", {"function process(block) end"});
  SUBCASE("not a number") {
    LuaShardUnderTest shard({{"script", script}, {"memory_mb", "lots"}});
    REQUIRE_FALSE(shard.ok());
    CHECK_MESSAGE(contains(shard.error(), "parameter 'memory_mb': 'lots' is not an integer"), shard.error());
  }
  SUBCASE("out of range") {
    LuaShardUnderTest shard({{"script", script}, {"instructions", "-1"}});
    REQUIRE_FALSE(shard.ok());
    CHECK_MESSAGE(contains(shard.error(), "parameter 'instructions': -1 is outside [0, 2147483647]"), shard.error());
  }
  SUBCASE("a heap too small for the state") {
    const auto big = dir.write("big.lua", {"local t = {} for i = 1, 200000 do t[i] = i end",
                                           "function process(block) end"});
    LuaShardUnderTest shard({{"script", big}, {"memory_mb", "1"}});
    REQUIRE_FALSE(shard.ok());
    CHECK_MESSAGE(contains(shard.error(), "not enough memory within memory_mb = 1 MiB"), shard.error());
  }
}

TEST_CASE("an input the view cannot read is refused naming the channel") {
  ScriptDir dir;
  const auto script = dir.write("script.lua", {"function process(block) end"});
  LuaShardUnderTest shard({{"script", script}}, WEIR_DTYPE_C64);
  REQUIRE_FALSE(shard.ok());
  CHECK_MESSAGE(contains(shard.error(), "input 'adc0': dtype 10 is not one the view reads"), shard.error());
}

}  // TEST_SUITE

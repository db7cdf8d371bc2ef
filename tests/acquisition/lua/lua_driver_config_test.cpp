// A pipeline's `driver "lua" { ... }` read into the driver's options the way `weir check` and the
// driver read it: the script found beside the pipeline file, and every bad setting refused with
// the file, the line and the part's name.
#include <doctest/doctest.h>

#include <string>

#include "lua_driver_fixture.hpp"
#include "weir/acq_lua/lua_driver_config.hpp"
#include "weir/config/pipeline.hpp"

using namespace weir;
using namespace weir::test;

namespace {

// Loads a pipeline whose third line is `driver "lua" { name = "thermo", channels = {"temp"}, BODY }`
// from `dir`/pipe.lua, and reads the driver's options.
core::Result<acq::LuaDriverOptions> options_of(const ScratchDir& dir, const std::string& body) {
  const std::string text = "arena { name = \"x\" }\nchannel \"temp\" { dtype = \"f64\", rate = 2, block = 4 }\n"
                           "driver \"lua\" { name = \"thermo\", channels = {\"temp\"}, " + body + " }\n";
  auto pipeline = config::load_pipeline_text(text, dir.file("pipe.lua"));
  REQUIRE_MESSAGE(pipeline, (pipeline ? "" : pipeline.error().what));
  REQUIRE(pipeline->drivers.size() == 1);
  return acq::lua_driver_options(*pipeline, pipeline->drivers[0]);
}

std::string error_of(const ScratchDir& dir, const std::string& body) {
  auto o = options_of(dir, body);
  return o ? std::string("(accepted)") : o.error().what;
}

}  // namespace

TEST_SUITE("acquisition.lua") {

TEST_CASE("settings become options: the script beside the pipeline, the channels as declared") {
  ScratchDir dir("luacfg");
  write_script(dir, "thermometer.lua", "function read() end");
  auto o = options_of(dir, "script = \"thermometer.lua\", call = \"read\", period = 0.5, memory_mb = 8, "
                           "instructions = 5000");
  REQUIRE_MESSAGE(o, (o ? "" : o.error().what));
  CHECK(o->part == "thermo");
  CHECK(o->script == dir.file("thermometer.lua"));
  CHECK(o->function == "read");
  CHECK(o->mode == acq::LuaCallMode::period);
  CHECK(o->period_s == 0.5);
  CHECK(o->memory_mb == 8);
  CHECK(o->instructions == 5000);
  REQUIRE(o->channels.size() == 1);
  CHECK(o->channels[0].name == "temp");
  CHECK(o->channels[0].rate_hz == 2.0);
  CHECK(o->channels[0].samples_per_block == 4);

  auto block = options_of(dir, "script = \"thermometer.lua\", per = \"block\"");
  REQUIRE_MESSAGE(block, (block ? "" : block.error().what));
  CHECK(block->mode == acq::LuaCallMode::per_block);
  CHECK(block->function == "acquire");
  CHECK(block->memory_mb == 64);
  CHECK(block->instructions == 10'000'000);
}

TEST_CASE("bad settings are refused with file, line and the part's name") {
  ScratchDir dir("luacfg");
  write_script(dir, "dev.lua", "function acquire() end");
  const std::string at = dir.file("pipe.lua") + ":3: ";
  CHECK(error_of(dir, "period = 1") == at + "driver \"thermo\": 'script' is required");
  CHECK(error_of(dir, "script = \"none.lua\", period = 1") ==
        at + "driver \"thermo\": script '" + dir.file("none.lua") + "' is not a readable file");
  CHECK(error_of(dir, "script = \"dev.lua\"") ==
        at + "driver \"thermo\": say when to call acquire: period = SECONDS or per = \"block\"");
  CHECK(error_of(dir, "script = \"dev.lua\", period = 1, per = \"block\"") ==
        at + "driver \"thermo\": give period = SECONDS or per = \"block\", not both");
  CHECK(error_of(dir, "script = \"dev.lua\", per = \"blok\"") ==
        at + "driver \"thermo\": 'per' = \"blok\": the only choice is \"block\" (else give period)");
  CHECK(error_of(dir, "script = \"dev.lua\", period = \"fast\"") ==
        at + "driver \"thermo\": 'period' must be a number, not a string");
  CHECK(error_of(dir, "script = \"dev.lua\", period = 0") ==
        at + "lua driver 'thermo': period must be 0.0001 to 86400 seconds, not 0");
  CHECK(error_of(dir, "script = \"dev.lua\", perod = 1") ==
        at + "driver \"thermo\": say when to call acquire: period = SECONDS or per = \"block\"");
  CHECK(error_of(dir, "script = \"dev.lua\", period = 1, memry_mb = 4") ==
        at + "driver \"thermo\": unknown key 'memry_mb' (did you mean 'memory_mb'?)");
  CHECK(error_of(dir, "script = \"dev.lua\", period = 1, memory_mb = 0") ==
        at + "driver \"thermo\": 'memory_mb' = 0 is out of range 1 to 65536");
  CHECK(error_of(dir, "script = \"dev.lua\", period = 1, instructions = -1") ==
        at + "driver \"thermo\": 'instructions' = -1 is out of range 0 to 2147483647");
}

}  // TEST_SUITE

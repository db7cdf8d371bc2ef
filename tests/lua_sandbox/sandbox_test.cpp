// The bounded state on its own: libraries, text-only loading, the budget, the heap, the error log.
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "scratch_dir.hpp"
#include "weir/lua_sandbox/error_log.hpp"
#include "weir/lua_sandbox/sandbox.hpp"

namespace {

using weir::lua_sandbox::CallStatus;
using weir::lua_sandbox::ErrorLog;
using weir::lua_sandbox::Sandbox;
using weir::lua_sandbox::SandboxOptions;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string write(const weir::test::ScratchDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.file(name);
  std::ofstream(path) << text;
  return path;
}

// Calls global `name` with no arguments; the status, and on failure the kept error text.
CallStatus call_global(Sandbox& sandbox, const char* name, ErrorLog* log = nullptr) {
  lua_State* L = sandbox.state();
  const int base = lua_gettop(L);
  lua_getglobal(L, name);
  const CallStatus status = sandbox.call(0, 1);
  if (status != CallStatus::ok && log != nullptr) (void)log->record(sandbox, status);
  lua_settop(L, base);
  return status;
}

}  // namespace

TEST_SUITE("lua_sandbox.sandbox") {

TEST_CASE("a script loads, runs and keeps its globals between calls") {
  weir::test::ScratchDir dir("sandbox");
  const auto path = write(dir, "count.lua", "n = 0\nfunction step() n = n + 1 return n end\n");
  Sandbox sandbox;
  REQUIRE(sandbox.open({}));
  REQUIRE(sandbox.load_file(path));
  CHECK(sandbox.script_path() == path);
  lua_State* L = sandbox.state();
  for (int i = 1; i <= 3; ++i) {
    lua_getglobal(L, "step");
    REQUIRE(sandbox.call(0, 1) == CallStatus::ok);
    CHECK(lua_tointeger(L, -1) == i);
    lua_pop(L, 1);
  }
  CHECK(lua_gettop(L) == 0);
}

TEST_CASE("a syntax error or a failing chunk is refused with file and line") {
  weir::test::ScratchDir dir("sandbox");
  Sandbox sandbox;
  REQUIRE(sandbox.open({}));
  SUBCASE("syntax") {
    auto loaded = sandbox.load_file(write(dir, "bad.lua", "x = 1\nfunction f(\n"));
    REQUIRE_FALSE(loaded);
    CHECK_MESSAGE(contains(loaded.error().what, "bad.lua:3:"), loaded.error().what);
  }
  SUBCASE("runtime") {
    auto loaded = sandbox.load_file(write(dir, "bad.lua", "local a\nlocal b = a.field\n"));
    REQUIRE_FALSE(loaded);
    CHECK_MESSAGE(contains(loaded.error().what, "bad.lua:2: attempt to index a nil value (local 'a')"),
                  loaded.error().what);
  }
  SUBCASE("missing file") {
    auto loaded = sandbox.load_file(dir.file("absent.lua"));
    REQUIRE_FALSE(loaded);
    CHECK_MESSAGE(contains(loaded.error().what, "cannot open"), loaded.error().what);
  }
  SUBCASE("text held in memory") {
    auto loaded = sandbox.load_text("x = = 1", "inline.lua");
    REQUIRE_FALSE(loaded);
    CHECK_MESSAGE(contains(loaded.error().what, "inline.lua:1:"), loaded.error().what);
  }
}

TEST_CASE("a binary chunk is refused") {
  weir::test::ScratchDir dir("sandbox");
  // "\x1bLua": the signature every precompiled chunk starts with.
  const auto path = write(dir, "compiled.lua", std::string("\x1bLua\x54\x00", 6));
  Sandbox sandbox;
  REQUIRE(sandbox.open({}));
  auto loaded = sandbox.load_file(path);
  REQUIRE_FALSE(loaded);
  CHECK_MESSAGE(contains(loaded.error().what, "attempt to load a binary chunk"), loaded.error().what);
}

TEST_CASE("only the trimmed libraries are there") {
  Sandbox sandbox;
  REQUIRE(sandbox.open({}));
  REQUIRE(sandbox.load_text(R"(
    function probe()
      local absent = {io = io, debug = debug, package = package, require = require, dofile = dofile,
                      loadfile = loadfile, load = load, print = print, warn = warn, coroutine = coroutine,
                      dump = string.dump, execute = os.execute, getenv = os.getenv, remove = os.remove}
      for name, value in pairs(absent) do error(name .. ' is there') end
      assert(string.format and table.concat and math.sqrt and utf8.char and os.clock and os.time)
      return 1
    end)",
                            "libs.lua"));
  ErrorLog log;
  CHECK_MESSAGE(call_global(sandbox, "probe", &log) == CallStatus::ok, log.last_error());
}

TEST_CASE("setmetatable refuses __gc naming the kind of script") {
  Sandbox sandbox;
  SandboxOptions options;
  options.script_kind = "driver script";
  REQUIRE(sandbox.open(options));
  REQUIRE(sandbox.load_text("function f() setmetatable({}, {__gc = function() end}) end", "gc.lua"));
  ErrorLog log;
  CHECK(call_global(sandbox, "f", &log) == CallStatus::error);
  CHECK_MESSAGE(contains(log.last_error(), "gc.lua:1: setmetatable: __gc is not allowed in a driver script"),
                log.last_error());
}

TEST_CASE("the instruction budget stops an endless call and the next call runs") {
  Sandbox sandbox;
  SandboxOptions options;
  options.instructions = 50000;
  REQUIRE(sandbox.open(options));
  REQUIRE(sandbox.load_text("calls = 0\n"
                            "function spin() calls = calls + 1 while true do pcall(function() while true do end end) end end\n"
                            "function ok() calls = calls + 1 return calls end\n",
                            "spin.lua"));
  ErrorLog log;
  CHECK(call_global(sandbox, "spin", &log) == CallStatus::budget_exceeded);
  CHECK_MESSAGE(contains(log.last_error(), "spin.lua:2: instruction budget of 50000 exceeded in one call"),
                log.last_error());
  CHECK_FALSE(sandbox.budget_blown());
  CHECK(call_global(sandbox, "ok") == CallStatus::ok);
  lua_getglobal(sandbox.state(), "calls");
  CHECK(lua_tointeger(sandbox.state(), -1) == 2);
  lua_pop(sandbox.state(), 1);
}

TEST_CASE("the chunk itself runs under the budget") {
  Sandbox sandbox;
  SandboxOptions options;
  options.instructions = 10000;
  options.budget_scope = "while loading";
  REQUIRE(sandbox.open(options));
  auto loaded = sandbox.load_text("while true do end", "loop.lua");
  REQUIRE_FALSE(loaded);
  CHECK_MESSAGE(contains(loaded.error().what, "loop.lua:1: instruction budget of 10000 exceeded while loading"),
                loaded.error().what);
}

TEST_CASE("the heap limit fails an allocation bomb and the state stays usable") {
  Sandbox sandbox;
  SandboxOptions options;
  options.memory_mb = 4;
  REQUIRE(sandbox.open(options));
  REQUIRE(sandbox.load_text("function bomb() local t = {} for i = 1, 1e9 do t[i] = string.rep('x', 100) .. i end end\n"
                            "function small() return #string.rep('y', 1000) end\n",
                            "bomb.lua"));
  ErrorLog log;
  CHECK(call_global(sandbox, "bomb", &log) == CallStatus::out_of_memory);
  CHECK_MESSAGE(contains(log.last_error(), "bomb.lua: not enough memory: the script's heap reached memory_mb = 4 MiB"),
                log.last_error());
  CHECK(sandbox.heap().peak_bytes <= std::size_t{4} << 20);
  CHECK(call_global(sandbox, "small") == CallStatus::ok);
}

TEST_CASE("settings out of range are refused") {
  Sandbox sandbox;
  SandboxOptions options;
  SUBCASE("no heap") {
    options.memory_mb = 0;
    auto opened = sandbox.open(options);
    REQUIRE_FALSE(opened);
    CHECK_MESSAGE(contains(opened.error().what, "memory_mb = 0 is outside [1, 65536]"), opened.error().what);
  }
  SUBCASE("negative budget") {
    options.instructions = -5;
    auto opened = sandbox.open(options);
    REQUIRE_FALSE(opened);
    CHECK_MESSAGE(contains(opened.error().what, "instructions = -5 is negative"), opened.error().what);
  }
}

TEST_CASE("function_ref names a missing function and its type") {
  Sandbox sandbox;
  REQUIRE(sandbox.open({}));
  REQUIRE(sandbox.load_text("acquire = 5\nfunction read() return 1 end", "dev.lua"));
  auto missing = sandbox.function_ref("acquire");
  REQUIRE_FALSE(missing);
  CHECK_MESSAGE(contains(missing.error().what, "dev.lua defines no global function 'acquire' (it is number)"),
                missing.error().what);
  auto found = sandbox.function_ref("read");
  REQUIRE(found);
  lua_rawgeti(sandbox.state(), LUA_REGISTRYINDEX, *found);
  REQUIRE(sandbox.call(0, 1) == CallStatus::ok);
  CHECK(lua_tointeger(sandbox.state(), -1) == 1);
}

TEST_CASE("errors carry a traceback and each distinct one is passed on to log once") {
  Sandbox sandbox;
  REQUIRE(sandbox.open({}));
  REQUIRE(sandbox.load_text("n = 0\nfunction f() n = n + 1 if n % 2 == 0 then error('even') end error({}) end", "e.lua"));
  ErrorLog log;
  int to_log = 0;
  for (int i = 0; i < 10; ++i) {
    lua_getglobal(sandbox.state(), "f");
    const CallStatus status = sandbox.call(0, 0);
    REQUIRE(status == CallStatus::error);
    if (log.record(sandbox, status)) ++to_log;
    lua_pop(sandbox.state(), 1);
  }
  CHECK(to_log == 2);
  CHECK(log.logged() == 2);
  CHECK_MESSAGE(contains(log.last_error(), "e.lua:2: even\nstack traceback:"), log.last_error());
  SUBCASE("a failure found outside Lua is kept and deduplicated the same way") {
    CHECK(log.note("dev.lua: acquire returned a boolean"));
    CHECK_FALSE(log.note("dev.lua: acquire returned a boolean"));
    CHECK(std::string(log.last_error()) == "dev.lua: acquire returned a boolean");
  }
}

TEST_CASE("at most kDistinctErrors messages are passed on to log") {
  ErrorLog log;
  int to_log = 0;
  for (int i = 0; i < 100; ++i) to_log += log.note(("error " + std::to_string(i)).c_str()) ? 1 : 0;
  CHECK(to_log == static_cast<int>(weir::lua_sandbox::kDistinctErrors));
  CHECK(std::string(log.last_error()) == "error 99");
}

}  // TEST_SUITE

// Every tick of the real `weir lua-driver` is accounted for, in the keys and in its channels: a call
// that raises, runs out of instructions or memory, or returns something unusable leaves a gap block
// (driver_error) in each channel it did not feed, a call that overruns its period skips ticks as
// late gaps, and calls + late = recorded + driver_error + late. Another process reads the channels
// back with a ChannelReader.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "channel_events.hpp"
#include "json.hpp"
#include "live_arena.hpp"
#include "lua_driver_fixture.hpp"
#include "run_weir.hpp"

using namespace weir;
using namespace weir::test;

namespace {

// The accounting keys of part P, and the tick equation.
struct Ticks {
  double calls, late_ticks, recorded, driver_error, late, errors;
  Ticks(const core::Arena& a, const std::string& p)
      : calls(key_number(a, p + ".calls")), late_ticks(key_number(a, p + ".late")),
        recorded(key_number(a, p + ".accounting.recorded")), driver_error(key_number(a, p + ".accounting.driver_error")),
        late(key_number(a, p + ".accounting.late")), errors(key_number(a, p + ".errors")) {}
  [[nodiscard]] bool balanced() const { return calls + late_ticks == recorded + driver_error + late; }
};

}  // namespace

TEST_SUITE("acquisition.lua.gaps") {

TEST_CASE("a failed call is a driver_error gap in each channel it did not feed, where its samples would be") {
  ScratchDir dir("luagaps");
  const auto script = write_script(dir, "dev.lua", R"(
function acquire(n)
  if n == 3 then error("no reply from the device") end
  if n == 5 then while true do end end
  if n == 7 then local s = string.rep("x", 1 << 30) end
  if n == 9 then return { temp = n, wave = {n, "high"} } end
  if n == 11 then return 42 end
  return { temp = n, wave = {10 * n, 10 * n + 1} }
end)");
  ScratchArena arena("luagaps");
  // temp: one sample a call, two a block (a failed call closes the block being filled); wave: a
  // block a call.
  const RunResult r = run_weir({"lua-driver", arena.name(), "--script", script, "--part", "dev", "--period", "0.05",
                                "--channels", "temp", "wave", "--block", "2", "--rate", "40", "--calls", "12",
                                "--instructions", "100000", "--memory-mb", "8", "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto json = parse_json(r.out);
  REQUIRE(json.is_object());
  REQUIRE_MESSAGE(json["late"] == 0, "a call overran its period on a busy machine: the placement below assumes none");
  CHECK(json["errors"] == 5);
  CHECK(json["recorded"] == 7);

  const auto temp = read_events(arena.arena(), "temp");
  CHECK(describe(temp) ==
        "[1 2] driver_error [4] driver_error [6] driver_error [8 9] [10] driver_error [12]");
  const auto wave = read_events(arena.arena(), "wave");
  CHECK(describe(wave) ==
        "[10 11] [20 21] driver_error [40 41] driver_error [60 61] driver_error [80 81] driver_error [100 101] "
        "driver_error [120 121]");
  CHECK(json["channels"][0]["gap_blocks"] == 4);
  CHECK(json["channels"][1]["gap_blocks"] == 5);

  const Ticks k(arena.arena(), "dev");
  CHECK(k.calls == 12);
  CHECK(k.recorded == 7);
  CHECK(k.driver_error == 5);
  CHECK(k.driver_error == k.errors);
  CHECK(k.late == 0);
  CHECK(k.balanced());
}

TEST_CASE("a call that overruns its period leaves a late gap for each tick it skipped, in every channel") {
  ScratchDir dir("luagaps");
  // Call 4 spins for many periods (no instruction limit); call 6 raises.
  const auto script = write_script(dir, "dev.lua", R"(
function acquire(n)
  if n == 4 then local x = 0; for i = 1, 30000000 do x = x + i end end
  if n == 6 then error("no reply") end
  return { a = n, b = -n }
end)");
  ScratchArena arena("luagaps");
  const RunResult r = run_weir({"lua-driver", arena.name(), "--script", script, "--part", "dev", "--per-block",
                                "--channels", "a", "b", "--block", "1", "--rate", "100", "--calls", "10",
                                "--instructions", "0", "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto json = parse_json(r.out);
  REQUIRE(json.is_object());
  const auto late = json["late"].get<std::uint64_t>();
  CHECK(late >= 2);  // 3e7 additions take far longer than two 10 ms periods

  for (const char* name : {"a", "b"}) {
    CAPTURE(name);
    const auto events = read_events(arena.arena(), name);
    const double sign = std::string(name) == "a" ? 1 : -1;
    // Once per block: one block a tick, so the channel is the ticks themselves in order: call n's
    // sample, a late gap per tick skipped, a driver_error gap for the call that raised.
    std::uint64_t lates = 0, errors = 0;
    double n = 1;
    for (const ChannelEvent& e : events) {
      if (e.gap && e.reason == core::GapReason::late) {
        ++lates;
        continue;
      }
      if (e.gap) {
        CHECK(e.reason == core::GapReason::driver_error);
        CHECK(n == 6);
        ++errors;
      } else {
        CHECK(e.samples == std::vector<double>{sign * n});
      }
      n += 1;
    }
    CHECK(n == 11);
    CHECK(errors == 1);
    CHECK(lates == late);
    // The skipped ticks follow call 4 (the first three calls were on time on an idle grid, or late ones
    // would show before it too: then lates exceeds the run after 4, which this also checks).
    std::size_t at = 0;
    while (at < events.size() && !(!events[at].gap && events[at].samples == std::vector<double>{sign * 4})) ++at;
    std::uint64_t run = 0;
    while (at + 1 + run < events.size() && events[at + 1 + run].gap && events[at + 1 + run].reason == core::GapReason::late)
      ++run;
    CHECK_MESSAGE(run >= 2, describe(events));
    CHECK(run <= lates);
  }

  const Ticks k(arena.arena(), "dev");
  CHECK(k.calls == 10);
  CHECK(k.late == static_cast<double>(late));
  CHECK(k.late_ticks == static_cast<double>(late));
  CHECK(k.driver_error == 1);
  CHECK(k.recorded == 9);
  CHECK(k.balanced());
}

}  // TEST_SUITE

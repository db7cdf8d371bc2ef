// The rules of an alert with a fake clock: for_s before firing, clear_s before resolving
// (hysteresis), every_s between repeats, one notice per transition; the conditions over figures
// built by hand; the notice as JSON and as a command's argv.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "weir/alerts/alert_engine.hpp"
#include "weir/alerts/incident.hpp"
#include "weir/alerts/notice.hpp"

using namespace weir;
using namespace weir::alerts;

namespace {

config::AlertDecl stall_alert(double for_s, double clear_s, double every_s) {
  config::AlertDecl a;
  a.name = "stall";
  a.when = "writer_stalled";
  a.stall_s = 5;
  a.for_s = for_s;
  a.clear_s = clear_s;
  a.every_s = every_s;
  a.webhook = "http://127.0.0.1:9/";
  return a;
}

Figures channel_aged(double age_s) {
  Figures f;
  ChannelFigures c;
  c.name = "adc0";
  c.rate_hz = 1000;
  c.samples_per_block = 100;
  c.ring_blocks = 64;
  c.active = true;
  c.age_s = age_s;
  c.samples_per_s = 1000;
  f.channels.push_back(c);
  return f;
}

std::vector<std::string> states(const std::vector<Notice>& ns) {
  std::vector<std::string> out;
  for (const auto& n : ns) out.push_back(n.state + (n.repeat ? "+" : "") + ":" + n.subject);
  return out;
}

}  // namespace

TEST_SUITE("tools.alerts") {

TEST_CASE("an incident fires only after holding for_s, and once") {
  Incident inc(IncidentTiming{10, 0, 0});
  CHECK(inc.update(0, true) == Transition::none);
  CHECK(inc.update(9.9, true) == Transition::none);
  CHECK(inc.update(10, true) == Transition::firing);
  CHECK(inc.update(11, true) == Transition::none);
  CHECK(inc.update(1000, true) == Transition::none);  // every_s 0: no repeats
  CHECK(inc.firing());
}

TEST_CASE("a condition that stops holding before for_s starts its count again") {
  Incident inc(IncidentTiming{10, 0, 0});
  CHECK(inc.update(0, true) == Transition::none);
  CHECK(inc.update(8, false) == Transition::none);
  CHECK(inc.update(9, true) == Transition::none);
  CHECK(inc.update(18, true) == Transition::none);
  CHECK(inc.update(19, true) == Transition::firing);
}

TEST_CASE("a firing incident resolves after clear_s false, and a flap inside clear_s keeps it firing") {
  Incident inc(IncidentTiming{0, 5, 0});
  CHECK(inc.update(0, true) == Transition::firing);
  CHECK(inc.update(1, false) == Transition::none);
  CHECK(inc.update(4, false) == Transition::none);
  CHECK(inc.update(5, true) == Transition::none);  // back before clear_s: the same incident
  CHECK(inc.update(6, false) == Transition::none);
  CHECK(inc.update(10.9, false) == Transition::none);
  CHECK(inc.update(11, false) == Transition::resolved);
  CHECK_FALSE(inc.firing());
  CHECK(inc.update(12, false) == Transition::none);  // exactly one resolved notice
  CHECK(inc.update(13, true) == Transition::firing);  // a second incident
}

TEST_CASE("while firing, repeats come at most every every_s") {
  Incident inc(IncidentTiming{0, 0, 30});
  CHECK(inc.update(0, true) == Transition::firing);
  int repeats = 0;
  for (double t = 0.5; t <= 100; t += 0.5)
    if (inc.update(t, true) == Transition::renotify) ++repeats;
  CHECK(repeats == 3);  // at 30, 60, 90
}

TEST_CASE("the engine notifies a stalled channel once firing and once resolved per incident") {
  AlertEngine engine({stall_alert(2, 1, 0)}, {}, "arena", "host");
  std::vector<Notice> all;
  const auto step = [&](double t, double age) {
    for (auto& n : engine.step(t, static_cast<std::int64_t>(t * 1e9), channel_aged(age))) all.push_back(n);
  };
  step(0, 0.1);
  step(1, 6);    // holds from here
  step(2, 7);
  CHECK(all.empty());
  step(3, 8);    // held for_s = 2
  REQUIRE(all.size() == 1);
  CHECK(all[0].state == "firing");
  CHECK(all[0].subject == "adc0");
  CHECK(all[0].value == 8);
  CHECK(all[0].threshold == 5);
  CHECK(all[0].started_at_ns == 1'000'000'000);
  CHECK(engine.firing() == std::vector<std::uint64_t>{1});
  step(4, 0.1);
  step(5, 0.1);  // false for clear_s = 1
  step(6, 0.1);
  step(7, 9);    // a second incident
  step(9, 9);
  step(10, 0.1);
  step(11, 0.1);
  CHECK(states(all) == std::vector<std::string>{"firing:adc0", "resolved:adc0", "firing:adc0", "resolved:adc0"});
}

TEST_CASE("the engine repeats a firing notice every every_s and resolves a subject that left") {
  AlertEngine engine({stall_alert(0, 0, 10)}, {}, "arena", "host");
  std::vector<Notice> all;
  for (double t = 0; t <= 25; t += 1)
    for (auto& n : engine.step(t, 0, channel_aged(60))) all.push_back(n);
  for (auto& n : engine.step(26, 0, Figures{})) all.push_back(n);  // the channel is gone
  CHECK(states(all) == std::vector<std::string>{"firing:adc0", "firing+:adc0", "firing+:adc0", "resolved:adc0"});
}

TEST_CASE("the default stall limit is four block periods, at least 30 s") {
  config::AlertDecl a = stall_alert(0, 0, 0);
  a.stall_s = 0;
  Watch w(a, {});
  Figures f = channel_aged(31);
  CHECK(w.evaluate(0, f).at(0).holds);
  CHECK(w.evaluate(0, f).at(0).threshold == 30);
  f.channels[0].rate_hz = 1;  // 100 s blocks: 400 s
  CHECK_FALSE(w.evaluate(0, f).at(0).holds);
  CHECK(w.evaluate(0, f).at(0).threshold == 400);
}

TEST_CASE("counters fire on an increase within window_s and clear once the window holds none") {
  config::AlertDecl a;
  a.name = "lost";
  a.when = "blocks_lost";
  a.window_s = 10;
  Watch w(a, {});
  Figures f = channel_aged(0);
  f.channels[0].consumers.push_back({"rec", true, false, 0, 5});  // lost before: no increase
  const auto held = [&](double t) {
    for (const Reading& r : w.evaluate(t, f))
      if (r.subject == "adc0/rec") return r.holds;
    FAIL("no reading for adc0/rec");
    return false;
  };
  CHECK_FALSE(held(0));
  f.channels[0].consumers[0].blocks_lost = 7;
  CHECK(held(1));
  CHECK(held(10));
  CHECK_FALSE(held(12));  // the window [2, 12] saw no loss
}

TEST_CASE("consumers of policy latest and dead rows never lag") {
  config::AlertDecl a;
  a.name = "lag";
  a.when = "consumer_lagging";
  a.fraction = 0.5;
  Watch w(a, {});
  Figures f = channel_aged(0);
  f.channels[0].consumers = {{"rec", true, false, 40, 0}, {"scope", true, true, 60, 0}, {"old", false, false, 60, 0}};
  const auto r = w.evaluate(0, f);
  REQUIRE(r.size() == 1);
  CHECK(r[0].subject == "adc0/rec");
  CHECK(r[0].holds);  // 40 > 0.5 * 64
  CHECK(r[0].threshold == 32);
}

TEST_CASE("disk_filling fits the free space over the window and predicts the hours left") {
  config::AlertDecl a;
  a.name = "fill";
  a.when = "disk_filling";
  a.window_s = 100;
  a.horizon_h = 1;
  Watch w(a, {"/data"});
  Figures f;
  std::vector<Reading> r;
  for (int t = 0; t <= 100; t += 10) {  // 1 MB/s down from 3 GB: about 48 min left at t = 100
    f.disks["/data"] = DiskFigures{true, static_cast<std::uint64_t>(3e9 - t * 1e6), 10'000'000'000};
    r = w.evaluate(t, f);
  }
  REQUIRE(r.size() == 1);
  CHECK(r[0].holds);
  CHECK(r[0].value == doctest::Approx(2900.0 / 3600).epsilon(0.01));
  a.horizon_h = 0.5;
  Watch calm(a, {"/data"});
  for (int t = 0; t <= 100; t += 10) {
    f.disks["/data"] = DiskFigures{true, static_cast<std::uint64_t>(3e9 - t * 1e6), 10'000'000'000};
    r = calm.evaluate(t, f);
  }
  CHECK_FALSE(r.at(0).holds);
}

TEST_CASE("parts, the run's verdict, the hand-off counter and the clock are read as the rules read them") {
  Figures f;
  f.parts["rec"].state = "given up";
  f.parts["src"].state = "running";
  f.parts["rec"].handoff_failures = 0;
  f.run_exact = false;
  f.clock_synchronised = false;
  config::AlertDecl a;
  a.when = "part_given_up";
  CHECK(Watch(a, {}).evaluate(0, f).size() == 2);
  a.parts = {"src"};
  CHECK_FALSE(Watch(a, {}).evaluate(0, f).at(0).holds);
  a.when = "run_not_balanced";
  CHECK(Watch(a, {}).evaluate(0, f).at(0).holds);
  a.when = "clock_unsynchronised";
  CHECK(Watch(a, {}).evaluate(0, f).at(0).subject == "clock");
  a.when = "handoff_failing";
  a.parts = {};
  a.window_s = 60;
  Watch handoff(a, {});
  CHECK_FALSE(handoff.evaluate(0, f).at(0).holds);
  f.parts["rec"].handoff_failures = 2;
  CHECK(handoff.evaluate(1, f).at(0).holds);
  CHECK(handoff.evaluate(1, f).at(0).subject == "rec");
}

TEST_CASE("a notice is JSON with every field, and a command's argv gets its fields substituted") {
  Notice n;
  n.name = "stall";
  n.condition = "writer_stalled";
  n.state = "firing";
  n.subject = "adc\"0";
  n.value = 6.5;
  n.threshold = 5;
  n.started_at_ns = 1'700'000'000'123'000'000;
  n.at_ns = 1'700'000'010'000'000'000;
  n.arena = "daq";
  n.host = "box";
  CHECK(notice_json(n) ==
        "{\"name\":\"stall\",\"condition\":\"writer_stalled\",\"state\":\"firing\",\"repeat\":false,\"subject\":\"adc\\\"0\","
        "\"value\":6.5,\"threshold\":5,\"started_at\":\"2023-11-14T22:13:20.123Z\",\"at\":\"2023-11-14T22:13:30.000Z\","
        "\"arena\":\"daq\",\"host\":\"box\"}");
  CHECK(notice_argv({"/bin/page", "{name}", "{state}:{subject}", "{value}", "{nope}"}, n) ==
        std::vector<std::string>{"/bin/page", "stall", "firing:adc\"0", "6.5", "{nope}"});
}

}  // TEST_SUITE

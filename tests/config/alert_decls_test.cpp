// alert "NAME" { when = ..., ... }: loaded with each condition's defaults, and refused with file:line
// and what is wrong (unknown condition, no target, a bad URL, a channel or part the pipeline lacks).
#include <doctest/doctest.h>

#include <string>

#include "weir/config/pipeline.hpp"

using namespace weir::config;

namespace {

constexpr char kHead[] =
    "arena { name = \"x\" }\n"
    "channel \"adc0\" { rate = 1000 }\n"
    "driver \"sim\" { channels = {\"adc0\"}, name = \"src\" }\n"
    "record \"hdf5\" { channels = {\"adc0\"}, out = \"/tmp/out\", name = \"rec\" }\n";

std::string check_error(const std::string& text) {
  auto p = load_pipeline_text(std::string(kHead) + text, "pipe.lua");
  if (!p) return p.error().what;
  auto r = resolve(*p, {});
  return r ? std::string("ok") : r.error().what;
}

}  // namespace

TEST_SUITE("config.alert") {

TEST_CASE("an alert loads with its condition's defaults and its targets") {
  auto p = load_pipeline_text(std::string(kHead) +
                                  "alert \"stall\" { when = \"writer_stalled\", channels = {\"adc0\"}, stall_s = 5, "
                                  "webhook = \"http://127.0.0.1:9000/hook\", command = {\"/bin/echo\", \"{name}\"} }\n"
                                  "alert \"disk\" { when = \"disk_below\", floor_gib = 5, for_s = 10, every_s = 300, "
                                  "webhook = \"http://[::1]/h\" }\n"
                                  "alert \"lag\" { when = \"consumer_lagging\", command = {\"page\"} }\n",
                              "pipe.lua");
  REQUIRE(p);
  REQUIRE(p->alerts.size() == 3);
  const AlertDecl& stall = p->alerts[0];
  CHECK(stall.origin.where() == "pipe.lua:5");
  CHECK(stall.when == "writer_stalled");
  CHECK(stall.channels == std::vector<std::string>{"adc0"});
  CHECK(stall.stall_s == 5);
  CHECK(stall.for_s == 60);
  CHECK(stall.command == std::vector<std::string>{"/bin/echo", "{name}"});
  CHECK(p->alerts[1].floor_gib == 5);
  CHECK(p->alerts[1].for_s == 10);
  CHECK(p->alerts[1].every_s == 300);
  CHECK(p->alerts[2].fraction == 0.5);
  CHECK(resolve(*p, {}));
}

TEST_CASE("a bad alert is refused naming file:line and what is wrong") {
  CHECK(check_error("alert \"a\" { when = \"writer_staled\", webhook = \"http://h/\" }\n")
            .find("pipe.lua:5: alert \"a\": unknown condition 'when' = \"writer_staled\" (did you mean 'writer_stalled'?)") == 0);
  CHECK(check_error("alert \"a\" { when = \"disk_below\" }\n").find("pipe.lua:5: alert \"a\": no target") == 0);
  CHECK(check_error("alert \"a\" { when = \"disk_below\", webhook = \"https://h/\" }\n")
            .find("pipe.lua:5: alert \"a\": 'webhook' = 'https://h/' is https") == 0);
  CHECK(check_error("alert \"a\" { when = \"disk_below\", webhook = \"ftp://h/\" }\n").find("pipe.lua:5: alert \"a\": 'webhook'") == 0);
  CHECK(check_error("alert \"a\" { when = \"disk_below\", webhook = \"http://h:99999/\" }\n").find("no port 1 to 65535") !=
        std::string::npos);
  CHECK(check_error("alert \"a\" { when = \"disk_below\", webhook = \"http:///x\" }\n").find("names no host") != std::string::npos);
  CHECK(check_error("alert \"a\" { when = \"writer_stalled\", channels = {\"adc1\"}, webhook = \"http://h/\" }\n") ==
        "pipe.lua:5: alert \"a\": channel 'adc1' is no channel of the pipeline (did you mean 'adc0'?); channels are: adc0");
  CHECK(check_error("alert \"a\" { when = \"part_given_up\", parts = {\"recc\"}, webhook = \"http://h/\" }\n") ==
        "pipe.lua:5: alert \"a\": part 'recc' is no part of the pipeline (did you mean 'rec'?); parts are: rec, src");
  CHECK(check_error("alert \"a\" { when = \"disk_below\", stall_s = 3, webhook = \"http://h/\" }\n")
            .find("pipe.lua:5: alert \"a\": unknown key 'stall_s'") == 0);
  CHECK(check_error("alert \"a\" { when = \"rate_below\", fraction = 2, webhook = \"http://h/\" }\n")
            .find("'fraction' = 2 must be more than 0 and at most 1") != std::string::npos);
  CHECK(check_error("alert \"a\" { when = \"run_not_balanced\", webhook = \"http://h/\" }\n"
                    "alert \"a\" { when = \"run_not_balanced\", webhook = \"http://h/\" }\n") ==
        "pipe.lua:6: a second alert named \"a\" (the first is at pipe.lua:5)");
}

}  // TEST_SUITE

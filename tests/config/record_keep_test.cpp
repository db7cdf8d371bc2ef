// A record declaration's hand-off and retention: `on_close = {...}` and `keep = {...}` loaded as
// written, and refused with file:line and what is wrong (a text instead of a list, a negative or
// unknown limit, handed_over without a hand-off, nothing to keep to).
#include <doctest/doctest.h>

#include <string>

#include "weir/config/pipeline.hpp"

using namespace weir::config;

namespace {

constexpr char kRecordHead[] =
    "arena { name = \"x\" }\n"
    "channel \"adc0\" { rate = 1000 }\n"
    "driver \"sim\" { channels = {\"adc0\"} }\n";

std::string record_error(const std::string& record) {
  auto p = load_pipeline_text(std::string(kRecordHead) + record, "pipe.lua");
  return p ? std::string("ok") : p.error().what;
}

}  // namespace

TEST_SUITE("config.record") {

TEST_CASE("on_close and keep load as written") {
  auto p = load_pipeline_text(std::string(kRecordHead) +
                                  "record \"hdf5\" { channels = {\"adc0\"}, out = \"/data\", on_close = {\"cp\", \"{path}\", \"/mnt\"},\n"
                                  "  keep = { free_gib = 0.5, max_gib = 100, max_age_days = 30 } }\n",
                              "pipe.lua");
  REQUIRE(p);
  REQUIRE(p->records.size() == 1);
  const RecordDecl& r = p->records[0];
  CHECK(r.on_close == std::vector<std::string>{"cp", "{path}", "/mnt"});
  CHECK(r.keep.free_gib == 0.5);
  CHECK(r.keep.max_gib == 100);
  CHECK(r.keep.max_age_days == 30);
  CHECK(r.keep.enabled());
  CHECK(r.keep.after.empty());  // handed_over, since there is a hand-off
}

TEST_CASE("a bad on_close or keep is refused naming file:line") {
  const std::string rec = "record \"hdf5\" { channels = {\"adc0\"}, out = \"/data\", ";
  CHECK(record_error(rec + "on_close = \"cp {path} /mnt\" }\n").find("pipe.lua:4") == 0);
  const std::string negative = record_error(rec + "keep = { free_gib = -1 } }\n");
  CHECK(negative.find("pipe.lua:4") == 0);
  CHECK(negative.find("keep.free_gib must be a number >= 0") != std::string::npos);
  CHECK(record_error(rec + "keep = { free_gb = 1 } }\n").find("pipe.lua:4") == 0);
  const std::string no_handoff = record_error(rec + "keep = { free_gib = 1, after = \"handed_over\" } }\n");
  CHECK(no_handoff.find("needs an on_close hand-off") != std::string::npos);
  CHECK(record_error(rec + "keep = { after = \"closed\" } }\n").find("set at least one of free_gib") != std::string::npos);
  CHECK(record_error(rec + "keep = { free_gib = 1, after = \"uploaded\" } }\n").find("keep.after 'uploaded'") != std::string::npos);
}

}  // TEST_SUITE

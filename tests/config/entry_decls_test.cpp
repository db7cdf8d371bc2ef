// The declarations that describe recordings: entry { ... }, source "NAME" { ... } and a channel's
// calibration = { ... }, loaded, and refused with file:line and what is wrong.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "weir/config/pipeline.hpp"

using namespace weir::config;

namespace {

constexpr char kArena[] = "arena { name = \"x\" }\n";

std::string load_error(const std::string& text) {
  auto p = load_pipeline_text(std::string(kArena) + text, "pipe.lua");
  return p ? std::string("loaded") : p.error().what;
}

}  // namespace

TEST_SUITE("config.entry") {

TEST_CASE("entry, source and a channel's calibration are loaded as written") {
  auto p = load_pipeline_text(std::string(kArena) + R"lua(entry { title = "Cs-137 bench", definition = "NXmonopd", default = "det0" }
source "ESS" { type = "Spallation Neutron Source", probe = "neutron" }
channel "det0" { rate = 1e6, units = "counts", calibration = { scale = 3.05e-4, offset = -1, units = "V" } }
channel "det1" { rate = 1e6, units = "V", calibration = { scale = 2 } }
channel "det2" { rate = 1e6 }
)lua",
                              "pipe.lua");
  REQUIRE_MESSAGE(p, (p ? "" : p.error().what));
  CHECK(p->entry.title == "Cs-137 bench");
  CHECK(p->entry.definition == "NXmonopd");
  CHECK(p->entry.default_plot == "det0");
  CHECK(p->entry.origin.where() == "pipe.lua:2");
  REQUIRE(p->source);
  CHECK(p->source->name == "ESS");
  CHECK(p->source->type == "Spallation Neutron Source");
  CHECK(p->source->probe == "neutron");
  REQUIRE(p->channels.size() == 3);
  REQUIRE(p->channels[0].calibration);
  CHECK(p->channels[0].calibration->scale == 3.05e-4);
  CHECK(p->channels[0].calibration->offset == -1);
  CHECK(p->channels[0].calibration->units == "V");
  REQUIRE(p->channels[1].calibration);
  CHECK(p->channels[1].calibration->offset == 0);
  CHECK(p->channels[1].calibration->units == "V");  // the channel's own units when the table names none
  CHECK_FALSE(p->channels[2].calibration);
  auto r = resolve(*p, {});
  REQUIRE(r);
  const std::string text = describe(*p, *r);
  CHECK_MESSAGE(text.find("calibrated: V = -1 + 0.000305 x raw\n") != std::string::npos, text);
  CHECK_MESSAGE(text.find("recordings: title \"Cs-137 bench\", definition NXmonopd, default plot det0, source \"ESS\" "
                          "(Spallation Neutron Source, neutron)\n") != std::string::npos,
                text);

  auto plain = load_pipeline_text(std::string(kArena) + "channel \"a\" { rate = 10 }\n", "pipe.lua");
  REQUIRE(plain);
  CHECK(plain->entry.title.empty());
  CHECK(plain->entry.definition.empty());
  CHECK_FALSE(plain->source);
}

TEST_CASE("a bad calibration is refused naming the channel and the value") {
  CHECK(load_error("channel \"det0\" { rate = 10, calibration = { scale = 0 } }\n") ==
        "pipe.lua:2: channel \"det0\".calibration: 'scale' = 0 must be a finite number other than 0 (value = offset + "
        "scale * raw)");
  CHECK(load_error("channel \"det0\" { rate = 10, calibration = { scale = 1/0 } }\n") ==
        "pipe.lua:2: channel \"det0\".calibration: 'scale' = inf must be a finite number other than 0 (value = offset + "
        "scale * raw)");
  CHECK(load_error("channel \"det0\" { rate = 10, calibration = { scale = 0/0 } }\n").find("channel \"det0\".calibration: 'scale' = ") !=
        std::string::npos);
  CHECK(load_error("channel \"det0\" { rate = 10, calibration = { scale = 1, offset = -1/0 } }\n") ==
        "pipe.lua:2: channel \"det0\".calibration: 'offset' = -inf must be a finite number");
  CHECK(load_error("channel \"det0\" { rate = 10, calibration = { offset = 1 } }\n") ==
        "pipe.lua:2: channel \"det0\".calibration: 'scale' is required");
  CHECK(load_error("channel \"det0\" { rate = 10, calibration = { scale = \"2\" } }\n") ==
        "pipe.lua:2: channel \"det0\".calibration: 'scale' must be a number, not a string");
  CHECK(load_error("channel \"det0\" { rate = 10, calibration = { scale = 2, unit = \"V\" } }\n") ==
        "pipe.lua:2: channel \"det0\".calibration: unknown key 'unit' (did you mean 'units'?)");
  CHECK(load_error("channel \"det0\" { rate = 10, calibration = 2 }\n") ==
        "pipe.lua:2: channel \"det0\": 'calibration' must be a table of name = value, not an integer");
}

TEST_CASE("a bad entry or source is refused") {
  CHECK(load_error("entry { definition = \"monopd\" }\n") ==
        "pipe.lua:2: entry: 'definition' = \"monopd\" is not the name of a NeXus definition (\"NX\" then letters, "
        "digits or '_', e.g. \"NXmonopd\")");
  CHECK(load_error("entry { titel = \"x\" }\n") == "pipe.lua:2: entry: unknown key 'titel' (did you mean 'title'?)");
  CHECK(load_error("entry { title = \"a\" }\nentry { title = \"b\" }\n") ==
        "pipe.lua:3: a second entry; a pipeline declares one (the first is at pipe.lua:2)");
  CHECK(load_error("source \"ESS\" { probe = \"neutrons\" }\n")
            .find("pipe.lua:2: source \"ESS\": 'probe' = \"neutrons\" is not one NeXus names (did you mean 'neutron'?); "
                  "NXsource's are: \"neutron\", \"photon\"") == 0);
  CHECK(load_error("source \"ESS\" { type = \"spallation\" }\n").find("pipe.lua:2: source \"ESS\": 'type' = \"spallation\"") == 0);
  CHECK(load_error("source \"a\" { }\nsource \"b\" { }\n") ==
        "pipe.lua:3: a second source; a pipeline declares one (the first is at pipe.lua:2)");
  CHECK(load_error("source { probe = \"neutron\" }\n").find("source takes a name first") != std::string::npos);
}

}  // TEST_SUITE

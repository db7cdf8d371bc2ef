#include <doctest/doctest.h>

#include "weir/dsp/param_text.hpp"

using namespace weir::dsp;

TEST_SUITE("dsp.adapter.param_text") {

TEST_CASE("numbers parse only when the whole text is the number") {
  CHECK(parse_int("42") == 42);
  CHECK(parse_int("+42") == 42);
  CHECK(parse_int("-7") == -7);
  CHECK_FALSE(parse_int("4.2"));
  CHECK_FALSE(parse_int(" 4"));
  CHECK_FALSE(parse_int(""));
  CHECK(parse_real("0.5") == 0.5);
  CHECK(parse_real("1e3") == 1000.0);
  CHECK_FALSE(parse_real("nan"));
  CHECK_FALSE(parse_real("inf"));
  CHECK_FALSE(parse_real(" 1"));
  CHECK_FALSE(parse_real("10 kHz"));
}

TEST_CASE("booleans and choices read the declared words") {
  CHECK(parse_bool("on") == true);
  CHECK(parse_bool("0") == false);
  CHECK_FALSE(parse_bool("maybe"));
  CHECK(among_choices("b", "a|b|c"));
  CHECK_FALSE(among_choices("", "a|b"));
  CHECK_FALSE(among_choices("d", "a|b|c"));
}

TEST_CASE("closest_name suggests a near name only") {
  CHECK(closest_name("windw", {"window", "outputs"}, 3) == "window");
  CHECK(closest_name("zzzzzz", {"window", "outputs"}, 3).empty());
}

}  // TEST_SUITE

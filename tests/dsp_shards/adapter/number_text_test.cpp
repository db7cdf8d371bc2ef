#include <doctest/doctest.h>

#include "weir/dsp/detail/number_text.hpp"

using weir::dsp::detail::num;
using weir::dsp::detail::whole;

TEST_SUITE("dsp.adapter.number_text") {

TEST_CASE("num writes the shortest text of 6 to 17 digits that reads back as the value") {
  CHECK(num(0.1) == "0.1");
  CHECK(num(1048576) == "1048576");
  CHECK(num(24000) == "24000");
  CHECK(num(16) == "16");
  CHECK(num(0.95) == "0.95");
  CHECK(num(-1) == "-1");
  CHECK(num(0) == "0");
  CHECK(num(1e300) == "1e+300");
  CHECK(num(5e-06) == "5e-06");
  CHECK(num(0.7071067811865476) == "0.7071067811865476");
  CHECK(num(1.0 / 3.0) == "0.3333333333333333");
  CHECK(num(50000000) == "5e+07");
}

TEST_CASE("whole writes whole sample counts as digits and anything else as num") {
  CHECK(whole(50000000) == "50000000");
  CHECK(whole(1048576) == "1048576");
  CHECK(whole(2.5) == "2.5");
  CHECK(whole(-3) == "-3");
}

}  // TEST_SUITE

// WEIR_ASSERT as a release build has it: compiled out, its condition never evaluated.
#ifndef NDEBUG
#define NDEBUG
#endif
#include "weir/core/assert.hpp"

#include <doctest/doctest.h>

TEST_SUITE("core.assert") {

TEST_CASE("under NDEBUG WEIR_ASSERT compiles out and WEIR_ENFORCE still checks") {
  int calls = 0;
  WEIR_ASSERT(++calls == 100, "never evaluated");  // would abort if it ran
  CHECK(calls == 0);
  WEIR_ENFORCE(++calls == 1, "holds");
  CHECK(calls == 1);
}

}  // TEST_SUITE

#include "weir/core/edit_distance.hpp"

#include <doctest/doctest.h>

TEST_SUITE("core.edit_distance") {

TEST_CASE("edit distance counts single-character insertions, deletions and substitutions") {
  using weir::core::edit_distance;
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("size", "size") == 0);
  CHECK(edit_distance("", "fft") == 3);
  CHECK(edit_distance("windw", "window") == 1);    // one insertion
  CHECK(edit_distance("windoww", "window") == 1);  // one deletion
  CHECK(edit_distance("sise", "size") == 1);       // one substitution
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("rate", "tare") == edit_distance("tare", "rate"));
}

}  // TEST_SUITE

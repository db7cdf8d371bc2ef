// Segment file names: composing, parsing back, and finding the files already there.
#include <doctest/doctest.h>

#include <fstream>

#include "harness.hpp"
#include "weir/recorder/naming.hpp"

using namespace weir::rec;
using weir::test::TempDir;

TEST_SUITE("recorders.stream.naming") {

TEST_CASE("a directory target names segments by arena, run and number") {
  const OutTarget t = parse_out("/data/runs");
  CHECK(t.is_dir);
  CHECK(segment_path(t, "daq1", 7, 0) == "/data/runs/daq1_run000007_0000.h5");
  CHECK(segment_path(t, "daq1", 1234567, 12345) == "/data/runs/daq1_run1234567_12345.h5");
}

TEST_CASE("a file target numbers later segments after its stem") {
  const OutTarget t = parse_out("/data/shot.h5");
  CHECK_FALSE(t.is_dir);
  CHECK(t.dir == "/data");
  CHECK(segment_path(t, "daq1", 3, 0) == "/data/shot.h5");
  CHECK(segment_path(t, "daq1", 3, 2) == "/data/shot_0002.h5");
  CHECK(parse_out("shot.h5").dir == ".");
}

TEST_CASE("existing segments are found, parsed and sorted; other files are ignored") {
  TempDir dir;
  for (const char* name : {"a_run000002_0001.h5", "a_run000002_0000.h5", "b_x_run000010_0003.h5",
                           "a_run000001_0000.h5", "notes.txt", "a_run00x001_0000.h5", "a_run000003.h5"})
    std::ofstream(dir.path() / name) << "x";
  const auto found = existing_segments(parse_out(dir.str()));
  REQUIRE(found.size() == 4);
  CHECK(found[0].run == 1);
  CHECK(found[1].run == 2);
  CHECK(found[1].number == 0);
  CHECK(found[2].number == 1);
  CHECK(found[3].arena == "b_x");  // the last "_run" splits the arena from the numbers
  CHECK(found[3].run == 10);
  CHECK(found[3].number == 3);
}

TEST_CASE("a file target finds its own series only") {
  TempDir dir;
  for (const char* name : {"shot.h5", "shot_0003.h5", "shot_x.h5", "shots.h5", "shot_0000.h5", "other.h5"})
    std::ofstream(dir.path() / name) << "x";
  const auto found = existing_segments(parse_out((dir.path() / "shot.h5").string()));
  REQUIRE(found.size() == 2);
  CHECK(found[0].number == 0);
  CHECK(found[0].path.filename() == "shot.h5");
  CHECK(found[1].number == 3);
}

TEST_CASE("a segment being written is NAME.partial: found with its numbers, its final name known") {
  TempDir dir;
  for (const char* name : {"a_run000001_0000.h5", "a_run000001_0001.h5.partial", "a_run000001_0002.h5.sha256",
                           "a_run000001_0003.partial", ".a_run000001_0004.h5.77.making", "shot.h5.partial"})
    std::ofstream(dir.path() / name) << "x";
  const auto found = existing_segments(parse_out(dir.str()));
  REQUIRE(found.size() == 2);
  CHECK_FALSE(found[0].partial);
  CHECK(final_path(found[0]) == found[0].path);
  CHECK(found[1].partial);
  CHECK(found[1].number == 1);
  CHECK(found[1].path.filename() == "a_run000001_0001.h5.partial");
  CHECK(final_path(found[1]) == dir.path() / "a_run000001_0001.h5");
  CHECK(partial_path(dir.path() / "a_run000001_0001.h5") == found[1].path);
  const auto series = existing_segments(parse_out((dir.path() / "shot.h5").string()));
  REQUIRE(series.size() == 1);  // FILE form too
  CHECK(series[0].partial);
  CHECK(final_path(series[0]).filename() == "shot.h5");
}

}  // TEST_SUITE

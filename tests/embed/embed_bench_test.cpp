// `weir bench vectors` prints the embed rows (windows/s per core of the shard and of the bare
// libtorch loop, batches of 1, 16 and 64) where the plugin is built, and a note instead where not.
#include <doctest/doctest.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "host_test_util.hpp"
#include "json.hpp"

TEST_SUITE("embed.bench") {

TEST_CASE("weir bench vectors --json has the embed rows with their baseline, or says why not" * doctest::timeout(120)) {
  const auto r = weir::test::run_weir_once({"bench", "vectors", "--quick", "--reps", "1", "--json"});
  REQUIRE(r.status.exited);
  REQUIRE_MESSAGE(r.status.code == weir::test::kExitOk, r.err);
  int shard_rows = 0, bare_rows = 0;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    const auto row = weir::test::parse_json(line);
    REQUIRE_MESSAGE(!row.is_discarded(), line);
    const std::string name = row.value("name", "");
    if (name.rfind("embed.", 0) != 0) continue;
    CHECK(row.value("unit", "") == "windows/s");
    CHECK(row.value("median", 0.0) > 0.0);
    if (name.rfind("embed.shard.batch", 0) == 0) {
      ++shard_rows;
      CHECK(row.value("baseline", "") == "embed.bare." + name.substr(std::string("embed.shard.").size()));
      CHECK(row.value("ratio", 0.0) > 0.0);
      CHECK(row.contains("meets_goal"));
      CHECK(row.value("window_samples", 0) == 256);
    } else {
      ++bare_rows;
    }
  }
  if (std::filesystem::exists(WEIR_EMBED_PLUGIN)) {
    CHECK(shard_rows == 3);
    CHECK(bare_rows == 3);
  } else {
    MESSAGE("the embed plugin was not built: the rows must be left out with a note");
    CHECK(shard_rows + bare_rows == 0);
    CHECK(weir::test::contains(r.err, "embed.* rows skipped"));
  }
}

}  // TEST_SUITE

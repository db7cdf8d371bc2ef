// Runs the built `weir` binary's vector commands (vset, vget, vsearch) as a user would.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "run_weir.hpp"

namespace {

using namespace weir::test;

// A unique arena plus a scratch folder for vector files, both removed however the test ends.
class Scratch {
 public:
  Scratch() {
    static std::atomic<int> counter{0};
    name_ = "vclitest" + std::to_string(getpid()) + "n" + std::to_string(counter.fetch_add(1));
    dir_ = std::filesystem::temp_directory_path() / name_;
    std::filesystem::create_directories(dir_);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() {
    std::error_code ignored;
    std::filesystem::remove("/dev/shm/weir." + name_, ignored);
    std::filesystem::remove_all(dir_, ignored);
  }
  [[nodiscard]] const std::string& name() const { return name_; }
  // Writes `text` to a file in the scratch folder and returns its path.
  std::string file(const std::string& base, std::string_view text) const {
    const std::filesystem::path path = dir_ / base;
    std::ofstream(path) << text;
    return path.string();
  }

 private:
  std::string name_;
  std::filesystem::path dir_;
};

}  // namespace

TEST_SUITE("tools.vector_cli") {

TEST_CASE("vset from a file stores a vector that vsearch finds at rank 1") {
  Scratch s;
  REQUIRE(run_weir({"create", s.name(), "--slots", "64", "--dim", "4"}).exit_code == kExitOk);
  REQUIRE(run_weir({"vset", s.name(), "north", s.file("north.txt", "0, 1, 0, 0\n")}).exit_code == kExitOk);
  REQUIRE(run_weir({"vset", s.name(), "east", s.file("east.txt", "1 0 0 0")}).exit_code == kExitOk);
  const RunResult piped = run_weir({"vset", s.name(), "north-east", "-"}, "0.7,\n0.7 0\t0\n");
  REQUIRE(piped.exit_code == kExitOk);
  CHECK(contains(piped.out, "4 floats"));

  const RunResult found = run_weir({"vsearch", s.name(), "--k", "2"}, "0.1 0.9 0 0");
  REQUIRE(found.exit_code == kExitOk);
  CHECK(contains(found.out, "RANK"));
  CHECK(found.out.find("1     north ") != std::string::npos);
  CHECK(found.out.find("2     north-east ") != std::string::npos);
  CHECK(std::count(found.out.begin(), found.out.end(), '\n') == 3);  // header and k = 2 rows

  const RunResult l2 = run_weir({"vsearch", s.name(), "--metric", "l2", "--json", "--query", s.file("q.txt", "1 0 0 0")});
  REQUIRE(l2.exit_code == kExitOk);
  CHECK(contains(l2.out, R"("hits":[{"rank":1,"key":"east","score":0})"));
  CHECK(contains(l2.out, R"("count":3)"));

  const RunResult got = run_weir({"vget", s.name(), "north-east"});
  REQUIRE(got.exit_code == kExitOk);
  CHECK(got.out == "0.7 0.7 0 0\n");
  CHECK(contains(run_weir({"vget", s.name(), "east", "--json"}).out, R"("vector":[1,0,0,0])"));
}

TEST_CASE("a vector of the wrong length is refused, naming the arena's dimension") {
  Scratch s;
  REQUIRE(run_weir({"create", s.name(), "--slots", "16", "--dim", "3"}).exit_code == kExitOk);
  const RunResult short_one = run_weir({"vset", s.name(), "k", "-"}, "1 2");
  CHECK(short_one.exit_code == kExitError);
  CHECK(contains(short_one.err, "has 2 floats"));
  CHECK(contains(short_one.err, "exactly 3 floats"));
  const RunResult query = run_weir({"vsearch", s.name()}, "1 2 3 4");
  CHECK(query.exit_code == kExitError);
  CHECK(contains(query.err, "exactly 3 floats"));
  const RunResult garbage = run_weir({"vset", s.name(), "k", "-"}, "1 two 3");
  CHECK(garbage.exit_code == kExitUsage);
  CHECK(contains(garbage.err, "'two'"));
  const RunResult missing = run_weir({"vget", s.name(), "k"});
  CHECK(missing.exit_code == kExitError);
  CHECK(contains(missing.err, "not found"));
}

}  // TEST_SUITE

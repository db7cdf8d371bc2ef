// Reading what a command takes in whole (weir/tools/read_input.hpp): a file, or stdin for "-",
// and the floats of a vector file.
#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

#include "scratch_dir.hpp"
#include "weir/tools/read_input.hpp"

using namespace weir;

TEST_SUITE("tools.read_input") {

TEST_CASE("parse_floats reads floats between whitespace and commas") {
  auto v = tools::parse_floats("0.1, 0.2 0.3\n-4e-3,,\t+5\r\n", "q");
  REQUIRE(v.has_value());
  CHECK(*v == std::vector<float>{0.1F, 0.2F, 0.3F, -4e-3F, 5.0F});
  auto empty = tools::parse_floats(" ,\n", "q");
  REQUIRE(empty.has_value());
  CHECK(empty->empty());
}

TEST_CASE("parse_floats names the first token that is not a float, and its place") {
  auto bad = tools::parse_floats("1 2 3x 4", "the query in 'q.txt'");
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().code == core::Errc::invalid_argument);
  CHECK(bad.error().what == "the query in 'q.txt': '3x' (number 3) is not a float");
  CHECK(tools::parse_floats("+", "q").error().what == "q: '+' (number 1) is not a float");
}

TEST_CASE("read_file_or_stdin reads a whole file, and names a file it cannot open") {
  test::ScratchDir dir("readinput");
  const std::string path = dir.file("v.txt");
  std::ofstream(path) << "1 2 3\n";
  auto text = tools::read_file_or_stdin(path, "'v.txt'");
  REQUIRE(text.has_value());
  CHECK(*text == "1 2 3\n");
  auto missing = tools::read_file_or_stdin(dir.file("none.txt"), "'none.txt'");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == core::Errc::io_error);
  CHECK(missing.error().what == "cannot open '" + dir.file("none.txt") + "': No such file or directory");
}

}  // TEST_SUITE

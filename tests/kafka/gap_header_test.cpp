// The "weir.gaps" header: runs join only when back to back and of one reason, the text parses back,
// and a damaged text is refused whole.
#include <doctest/doctest.h>

#include "gap_header.hpp"

namespace weir::test {

TEST_SUITE("kafka.codec") {

TEST_CASE("gap runs join when contiguous and of one reason, and parse back from their text") {
  std::vector<kafka::GapRun> runs;
  kafka::add_run(runs, 10, 2, core::GapReason::kernel_drop);
  kafka::add_run(runs, 12, 3, core::GapReason::kernel_drop);
  kafka::add_run(runs, 15, 1, core::GapReason::sink_overflow);
  kafka::add_run(runs, 16, 0, core::GapReason::late);  // nothing
  REQUIRE(runs.size() == 2);
  CHECK(kafka::format_runs(runs) == "10:5:kernel_drop,15:1:sink_overflow");
  std::vector<kafka::GapRun> back;
  REQUIRE(kafka::parse_runs("10:5:kernel_drop,15:1:sink_overflow", back));
  REQUIRE(back.size() == 2);
  CHECK(back[1].first == 15);
  CHECK(back[1].reason == core::GapReason::sink_overflow);
  CHECK_FALSE(kafka::parse_runs("10:5:kernel_drop,15:x:late", back));
  CHECK(back.empty());
  CHECK_FALSE(kafka::parse_runs("1:2:no_such_reason", back));
}

}  // TEST_SUITE

}  // namespace weir::test

// Retention's choice alone (weir/recorder/retention.hpp), on made-up listings: oldest first, never
// the open run, never a file not handed over when a hand-off is required, each deletion's reason.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "weir/recorder/retention.hpp"

using namespace weir;
using namespace weir::rec;

namespace {

constexpr std::uint64_t kMiB = 1024 * 1024;
constexpr std::int64_t kDayNs = 86'400'000'000'000;
constexpr std::int64_t kNow = 100 * kDayNs;

KeptFile file(std::uint64_t run, std::uint64_t segment, std::uint64_t mib, bool open_run = false, bool handed = true,
              std::int64_t closed_ns = kNow) {
  return KeptFile{"d/a_run" + std::to_string(run) + "_" + std::to_string(segment) + ".h5", run, segment, mib * kMiB, closed_ns,
                  open_run, handed};
}

KeepOptions free_floor(double gib) {
  KeepOptions k;
  k.free_gib = gib;
  return k;
}

std::vector<std::string> chosen(const std::vector<KeptFile>& files, const RetentionPlan& plan) {
  std::vector<std::string> out;
  for (const DeleteChoice& d : plan.deletions) out.push_back(files[d.index].path);
  return out;
}

}  // namespace

TEST_SUITE("recorders.stream.retention") {

TEST_CASE("free space below the floor: the oldest files of finished runs go first, by run then segment, until it is not") {
  // Listed out of order on purpose.
  const std::vector<KeptFile> files{file(3, 0, 10), file(2, 1, 10), file(2, 0, 10), file(1, 0, 10), file(4, 0, 10, true)};
  const RetentionPlan plan = plan_retention(files, free_floor(100.0 / 1024), false, 75 * kMiB, kNow);
  CHECK(chosen(files, plan) == std::vector<std::string>{"d/a_run1_0.h5", "d/a_run2_0.h5", "d/a_run2_1.h5"});
  for (const DeleteChoice& d : plan.deletions) CHECK(d.reason == DeleteReason::free_space);
  CHECK_FALSE(plan.blocked);
  CHECK(plan.kept_back == 0);
}

TEST_CASE("nothing is taken while every limit holds") {
  const std::vector<KeptFile> files{file(1, 0, 10), file(2, 0, 10)};
  KeepOptions keep = free_floor(0.05);
  keep.max_gib = 1;
  keep.max_age_days = 30;
  const RetentionPlan plan = plan_retention(files, keep, false, 100 * kMiB, kNow);
  CHECK(plan.deletions.empty());
  CHECK_FALSE(plan.blocked);
}

TEST_CASE("never a file of the open run: when only it is left, retention is blocked") {
  const std::vector<KeptFile> files{file(7, 0, 40, true), file(7, 1, 40, true), file(6, 0, 5)};
  const RetentionPlan plan = plan_retention(files, free_floor(0.1), false, 10 * kMiB, kNow);
  CHECK(chosen(files, plan) == std::vector<std::string>{"d/a_run6_0.h5"});
  CHECK(plan.kept_back == 2);
  CHECK(plan.blocked);  // 15 MiB free after run 6's file, below 102.4 MiB: nothing more may go
}

TEST_CASE("a required hand-off not done keeps the file; later handed-over files still go") {
  const std::vector<KeptFile> files{file(1, 0, 10), file(1, 1, 10, false, false), file(1, 2, 10), file(2, 0, 10)};
  SUBCASE("handed_over required") {
    const RetentionPlan plan = plan_retention(files, free_floor(100.0 / 1024), true, 75 * kMiB, kNow);
    CHECK(chosen(files, plan) == std::vector<std::string>{"d/a_run1_0.h5", "d/a_run1_2.h5", "d/a_run2_0.h5"});
    CHECK(plan.kept_back == 1);
    CHECK_FALSE(plan.blocked);  // 105 MiB free
  }
  SUBCASE("after closed: the marker does not matter") {
    const RetentionPlan plan = plan_retention(files, free_floor(100.0 / 1024), false, 75 * kMiB, kNow);
    CHECK(chosen(files, plan) == std::vector<std::string>{"d/a_run1_0.h5", "d/a_run1_1.h5", "d/a_run1_2.h5"});
  }
}

TEST_CASE("each deletion has the first limit it is over as its reason: free space, then the total, then age") {
  KeepOptions keep = free_floor(20.0 / 1024);
  keep.max_gib = 25.0 / 1024;
  keep.max_age_days = 10;
  const std::vector<KeptFile> files{file(1, 0, 10, false, true, kNow - 50 * kDayNs), file(2, 0, 10, false, true, kNow - 40 * kDayNs),
                                    file(3, 0, 10, false, true, kNow - 20 * kDayNs), file(4, 0, 10, false, true, kNow - 1 * kDayNs),
                                    file(5, 0, 10, true, true, kNow)};
  // 15 MiB free: one file makes it 25 (free_space); 40 MiB in files is over 25: one more (max_total, 30 left),
  // another (max_total, 20 left); run 4's file is a day old: kept.
  const RetentionPlan plan = plan_retention(files, keep, false, 15 * kMiB, kNow);
  REQUIRE(plan.deletions.size() == 3);
  CHECK(plan.deletions[0].reason == DeleteReason::free_space);
  CHECK(plan.deletions[1].reason == DeleteReason::max_total);
  CHECK(plan.deletions[2].reason == DeleteReason::max_total);
  CHECK(delete_reason_name(plan.deletions[0].reason) == "free_space");
  SUBCASE("age alone") {
    KeepOptions age;
    age.max_age_days = 30;
    const RetentionPlan by_age = plan_retention(files, age, false, 1000 * kMiB, kNow);
    CHECK(chosen(files, by_age) == std::vector<std::string>{"d/a_run1_0.h5", "d/a_run2_0.h5"});
    for (const DeleteChoice& d : by_age.deletions) CHECK(d.reason == DeleteReason::max_age);
  }
}

TEST_CASE("keep.after and GiB: names parsed, bad ones refused naming them, fractions of a GiB") {
  CHECK(parse_keep_after("closed").value() == KeepAfter::closed);
  CHECK(parse_keep_after("handed_over").value() == KeepAfter::handed_over);
  const auto bad = parse_keep_after("handed");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().what.find("'handed'") != std::string::npos);
  CHECK(gib_bytes(0.5) == 512 * kMiB);
  CHECK(gib_bytes(0) == 0);
  CHECK(gib_bytes(-1) == 0);
  CHECK_FALSE(KeepOptions{}.enabled());
}

}  // TEST_SUITE

// The audit of real runs: files recorded by the real recorder, copies of them edited into the
// faults a ledger must find (a segment twice, a segment lost, gap-flagged blocks, gap rows that
// overlap, another arena incarnation, a tail the run record knows of), each read back by
// audit_run and checked against the blocks known to be there.
#include <doctest/doctest.h>

#include <fstream>
#include <numeric>

#include "recorded_run.hpp"
#include "weir/ledger/audit.hpp"

using namespace weir;
using namespace weir::test;
using ledger::ChannelLedger;
using h5::GapReason;

namespace {

constexpr std::uint64_t kBlocks = 40;  // per channel and segment
const std::vector<std::string> kChannels{"adc0", "adc1"};

std::uint64_t gap(const ChannelLedger& c, GapReason r) { return c.gaps[static_cast<std::size_t>(r)]; }

// recorded + every gap in sequence space + unaccounted == end - first, and written adds the
// blocks dropped at the source.
void check_invariant(const ChannelLedger& c) {
  CAPTURE(c.channel);
  std::uint64_t gaps = std::accumulate(c.gaps.begin(), c.gaps.end(), std::uint64_t{0});
  const std::uint64_t dropped = gap(c, GapReason::dropped_at_source);
  CHECK(c.recorded + (gaps - dropped) + c.unaccounted == c.end - c.first);
  CHECK(c.written == c.end - c.first + dropped);
  CHECK(c.tail <= gaps);
}

const ChannelLedger& channel(const ledger::Audit& a, const std::string& name) {
  for (const ChannelLedger& c : a.channels)
    if (c.channel == name) return c;
  FAIL("no channel " << name);
  return a.channels.front();
}

ledger::Audit audit(const std::filesystem::path& where, ledger::AuditOptions options = {}) {
  auto a = ledger::audit_run(where, options);
  REQUIRE_MESSAGE(a, (a ? "" : a.error().what));
  for (const ChannelLedger& c : a->channels) check_invariant(c);
  return std::move(*a);
}

// One recorded run of three segments, shared by the cases below (each edits its own copy).
struct Run {
  ScratchDir dir{"ledger-run"};
  std::string arena;
  Run() { arena = record_run(dir.str(), 7, kChannels, 3, kBlocks); }
  [[nodiscard]] std::filesystem::path segment(std::uint64_t n) const { return segment_file(dir.path(), arena, 7, n); }
};

}  // namespace

TEST_SUITE("recorders.ledger.audit") {

TEST_CASE("a clean run of three segments is exact: every block recorded once, every file closed" * doctest::timeout(60)) {
  Run run;
  const ledger::Audit a = audit(run.dir.path());
  CHECK(a.run == 7);
  CHECK(a.arena == run.arena);
  CHECK(a.exact());
  CHECK_FALSE(a.record.has_value());
  REQUIRE(a.files.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(a.files[i].segment == i);
    CHECK(a.files[i].state == "closed");
    CHECK(a.files[i].blocks == kBlocks * kChannels.size());
  }
  REQUIRE(a.channels.size() == 2);
  for (const ChannelLedger& c : a.channels) {
    CHECK(c.first == 0);
    CHECK(c.end == 3 * kBlocks);
    CHECK(c.written == 3 * kBlocks);
    CHECK(c.recorded == 3 * kBlocks);
    CHECK(c.duplicates == 0);
    CHECK(c.unaccounted == 0);
    CHECK(c.incarnations == 1);
    CHECK(ledger::lost_blocks(c) == 0);
  }
}

TEST_CASE("a segment copied under the next number is duplicated, a deleted middle segment is unaccounted" *
          doctest::timeout(60)) {
  Run run;
  SUBCASE("duplicated") {
    std::filesystem::copy_file(run.segment(1), run.segment(3));
    const ledger::Audit a = audit(run.dir.path());
    CHECK_FALSE(a.exact());
    CHECK(a.files.size() == 4);
    for (const ChannelLedger& c : a.channels) {
      CHECK(c.duplicates == kBlocks);
      CHECK(c.recorded == 3 * kBlocks);
      CHECK(c.unaccounted == 0);
    }
  }
  SUBCASE("a hole") {
    std::filesystem::remove(run.segment(1));
    const ledger::Audit a = audit(run.dir.path());
    CHECK_FALSE(a.exact());
    for (const ChannelLedger& c : a.channels) {
      CHECK(c.recorded == 2 * kBlocks);
      CHECK(c.unaccounted == kBlocks);
      CHECK(c.end == 3 * kBlocks);
      CHECK(ledger::lost_blocks(c) == kBlocks);
    }
  }
  SUBCASE("the last segment lost: the run record's written makes it a tail, under the recorded fault's reason") {
    std::filesystem::remove(run.segment(2));
    CHECK(audit(run.dir.path()).exact());  // without a record the files end the ledger
    const auto path = ledger::run_record_path(run.dir.path(), run.arena, 7);
    REQUIRE(ledger::update_run_record(path, [&](ledger::RunRecord& r) {
      r.run = 7;
      for (const std::string& name : kChannels) r.channel(name).written = 3 * kBlocks;
    }));
    ledger::Audit a = audit(run.dir.path());
    CHECK(a.exact());
    REQUIRE(a.record.has_value());
    for (const ChannelLedger& c : a.channels) {
      CHECK(c.end == 3 * kBlocks);
      CHECK(c.tail == kBlocks);
      CHECK(gap(c, GapReason::recorder_down) == kBlocks);
    }
    REQUIRE(ledger::update_run_record(path, [&](ledger::RunRecord& r) {
      r.faults.push_back(ledger::Fault{"record", "disk_error", "No space left on device", 28, 1});
    }));
    a = audit(run.dir.path());
    for (const ChannelLedger& c : a.channels) {
      CHECK(gap(c, GapReason::disk_error) == kBlocks);
      CHECK(gap(c, GapReason::recorder_down) == 0);
      CHECK(ledger::lost_blocks(c) == kBlocks);
    }
  }
}

TEST_CASE("gap-flagged blocks count as source_loss, gap rows account for their blocks, overlaps are duplicates" *
          doctest::timeout(60)) {
  Run run;
  flag_gap_blocks(run.segment(2), "adc0", 5, 10);
  // adc1: a hole at the end made good by a gap row, then rows that overlap data and each other.
  add_gap_row(run.segment(2), "adc1", 3 * kBlocks, 25, GapReason::lapped);
  add_gap_row(run.segment(2), "adc1", 3 * kBlocks + 25, 0, GapReason::recorder_restart);  // a marker
  add_gap_row(run.segment(2), "adc1", 3 * kBlocks + 25, 5, GapReason::dropped_at_source);
  ledger::Audit a = audit(run.dir.path());
  CHECK(a.exact());
  const ChannelLedger& adc0 = channel(a, "adc0");
  CHECK(adc0.recorded == 3 * kBlocks - 10);
  CHECK(gap(adc0, GapReason::source_loss) == 10);
  CHECK(adc0.end == 3 * kBlocks);
  const ChannelLedger& adc1 = channel(a, "adc1");
  CHECK(adc1.recorded == 3 * kBlocks);
  CHECK(adc1.end == 3 * kBlocks + 25);
  CHECK(gap(adc1, GapReason::lapped) == 25);
  CHECK(gap(adc1, GapReason::recorder_restart) == 0);
  CHECK(gap(adc1, GapReason::dropped_at_source) == 5);
  CHECK(adc1.written == 3 * kBlocks + 25 + 5);

  add_gap_row(run.segment(1), "adc1", kBlocks + 30, 20, GapReason::lapped);  // 20 blocks that are recorded
  add_gap_row(run.segment(0), "adc1", 3 * kBlocks + 20, 10, GapReason::recorder_down);  // 5 over the lapped row
  a = audit(run.dir.path());
  CHECK_FALSE(a.exact());
  const ChannelLedger& again = channel(a, "adc1");
  CHECK(again.duplicates == 20 + 5);
  CHECK(again.recorded == 3 * kBlocks);
  CHECK(again.end == 3 * kBlocks + 30);
  CHECK(gap(again, GapReason::lapped) == 25);       // the overlap counts under one reason only
  CHECK(gap(again, GapReason::recorder_down) == 5);
  CHECK(again.unaccounted == 0);
}

TEST_CASE("files of another arena incarnation are a second sequence space, summed" * doctest::timeout(60)) {
  Run run;
  // Segment 0 again, as if the arena had been re-created and its sequences started afresh.
  std::filesystem::copy_file(run.segment(0), run.segment(3));
  set_root_u64(run.segment(3), h5::kAttrArenaCreatedNs, 42);
  set_root_u64(run.segment(3), h5::kAttrSegment, 3);
  ledger::Audit a = audit(run.dir.path());
  CHECK(a.exact());
  for (const ChannelLedger& c : a.channels) {
    CHECK(c.incarnations == 2);
    CHECK(c.recorded == 4 * kBlocks);
    CHECK(c.duplicates == 0);
    CHECK(c.end - c.first == 4 * kBlocks);
  }
  // The record's mark of the new incarnation says it wrote 10 more than the files hold: a tail there.
  REQUIRE(ledger::update_run_record(ledger::run_record_path(run.dir.path(), run.arena, 7), [&](ledger::RunRecord& r) {
    r.run = 7;
    r.channel("adc0").written = kBlocks + 10;
    r.channel("adc0").arena_created_ns = 42;
  }));
  a = audit(run.dir.path());
  CHECK(a.exact());
  CHECK(channel(a, "adc0").tail == 10);
  CHECK(channel(a, "adc0").end - channel(a, "adc0").first == 4 * kBlocks + 10);
  CHECK(channel(a, "adc1").tail == 0);
}

TEST_CASE("durable: the blocks of files closed before the record's last sync" * doctest::timeout(60)) {
  Run run;
  const auto stop_ns = [&](std::uint64_t segment) {
    EditFile f(run.segment(segment));
    auto v = h5::read_u64_attr(f.file.get(), h5::kAttrStopNs);
    REQUIRE(v);
    return *v;
  };
  const std::uint64_t synced = stop_ns(1);
  REQUIRE(synced < stop_ns(2));
  REQUIRE(ledger::update_run_record(ledger::run_record_path(run.dir.path(), run.arena, 7), [&](ledger::RunRecord& r) {
    r.run = 7;
    r.fsync = "rotation";
    r.synced_ns = synced;
  }));
  for (const ChannelLedger& c : audit(run.dir.path()).channels) CHECK(c.durable == 2 * kBlocks);
}

TEST_CASE("an unreadable file makes the audit inexact and names it, and choosing among runs" * doctest::timeout(60)) {
  Run run;
  SUBCASE("unreadable") {
    std::ofstream(run.segment(3)) << "not a recording";
    const ledger::Audit a = audit(run.dir.path());
    CHECK_FALSE(a.exact());
    REQUIRE(a.files.size() == 4);
    CHECK(a.files[3].state == "unreadable");
    CHECK(a.files[3].error.find(run.segment(3).string()) != std::string::npos);
  }
  SUBCASE("several runs") {
    std::filesystem::copy_file(run.segment(0), segment_file(run.dir.path(), run.arena, 8, 0));
    auto several = ledger::audit_run(run.dir.path());
    REQUIRE_FALSE(several);
    CHECK(several.error().what.find(run.dir.str()) != std::string::npos);
    CHECK(several.error().what.find("run000007") != std::string::npos);
    CHECK(several.error().what.find("run000008") != std::string::npos);
    ledger::AuditOptions options;
    options.run = 8;
    const ledger::Audit eight = audit(run.dir.path(), options);
    CHECK(eight.files.size() == 1);
    CHECK(eight.exact());
    options.run = 9;
    auto none = ledger::audit_run(run.dir.path(), options);
    REQUIRE_FALSE(none);
    CHECK(none.error().what.find("no recording of run 9") != std::string::npos);
    options = {};
    options.arena = "elsewhere";
    CHECK_FALSE(ledger::audit_run(run.dir.path(), options));
  }
  SUBCASE("a run record and no file of its run: the whole range is a tail") {
    ScratchDir alone("ledger-alone");
    REQUIRE(ledger::update_run_record(ledger::run_record_path(alone.path(), "lab", 2), [&](ledger::RunRecord& r) {
      r.run = 2;
      r.channel("adc0").first_sequence = 10;
      r.channel("adc0").written = 25;
    }));
    const ledger::Audit a = audit(alone.path());
    CHECK(a.run == 2);
    CHECK(a.arena == "lab");
    CHECK(a.files.empty());
    REQUIRE(a.channels.size() == 1);
    CHECK(a.channels[0].first == 10);
    CHECK(a.channels[0].end == 25);
    CHECK(gap(a.channels[0], GapReason::recorder_down) == 15);
    CHECK(a.exact());
  }
  SUBCASE("an empty directory") {
    ScratchDir empty("ledger-empty");
    auto none = ledger::audit_run(empty.path());
    REQUIRE_FALSE(none);
    CHECK(none.error().what.find("no recording in " + empty.str()) != std::string::npos);
  }
}

TEST_CASE("FILE form: FILE.h5, FILE_0001.h5 ... with their run in an attribute, and the record named after the stem" *
          doctest::timeout(60)) {
  ScratchDir dir("ledger-fileform");
  const std::string out = dir.file("take.h5");
  record_run(out, 3, {"adc0"}, 2, kBlocks);
  REQUIRE(std::filesystem::exists(dir.file("take_0001.h5")));
  ledger::Audit a = audit(out);
  CHECK(a.run == 3);
  CHECK(a.exact());
  REQUIRE(a.files.size() == 2);
  REQUIRE(a.channels.size() == 1);
  CHECK(a.channels[0].recorded == 2 * kBlocks);
  REQUIRE(ledger::update_run_record(ledger::run_record_path(dir.path(), "take", 3), [&](ledger::RunRecord& r) {
    r.run = 3;
    r.channel("adc0").written = 2 * kBlocks + 7;
  }));
  a = audit(out);
  CHECK(a.record.has_value());
  CHECK(a.channels[0].tail == 7);
}

}  // TEST_SUITE

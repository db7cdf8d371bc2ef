// The run record: every field through to_json and from_json, the refusals that name the file, and
// update_run_record from two processes at once losing none of the other's changes.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "scratch_dir.hpp"
#include "weir/ledger/run_record.hpp"

using namespace weir;
using namespace weir::ledger;

TEST_SUITE("recorders.ledger.run_record") {

TEST_CASE("to_json and from_json carry every field") {
  RunRecord r;
  r.run = 41;
  r.arena = "lab";
  r.arena_created_ns = 1'700'000'000'000'000'001;
  r.pipeline = "lab.lua";
  r.writer = "weir run";
  r.started_ns = 11;
  r.stopped_ns = 22;
  r.fsync = "interval";
  r.synced_ns = 21;
  ChannelMark& c = r.channel("adc0");
  c.first_sequence = 5;
  c.written = UINT64_MAX - 1;
  c.dropped_at_source = 3;
  c.final = true;
  c.arena_created_ns = 9;
  PartMark& p = r.part("rec");
  p.role = "record";
  p.state = "given up";
  p.last_exit = "exit 4";
  p.restarts = 6;
  p.essential = true;
  r.faults.push_back(Fault{"rec", "disk_error", "EIO \"quoted\"", 5, 33});
  CHECK(&r.channel("adc0") == &c);  // found, not added again
  CHECK(r.find_channel("adc1") == nullptr);

  auto back = from_json(to_json(r), "test");
  REQUIRE(back);
  CHECK(to_json(*back) == to_json(r));
  CHECK(back->run == 41);
  CHECK(back->arena_created_ns == r.arena_created_ns);
  REQUIRE(back->channels.size() == 1);
  CHECK(back->channels[0].written == UINT64_MAX - 1);
  CHECK(back->channels[0].final);
  CHECK(back->channels[0].arena_created_ns == 9);
  REQUIRE(back->parts.size() == 1);
  CHECK(back->parts[0].last_exit == "exit 4");
  CHECK(back->parts[0].essential);
  REQUIRE(back->faults.size() == 1);
  CHECK(back->faults[0].what == "EIO \"quoted\"");
  CHECK(back->faults[0].error_number == 5);
}

TEST_CASE("reading: none is no record, another format or bad JSON is refused naming the file") {
  test::ScratchDir dir("ledger-record");
  const auto path = run_record_path(dir.path(), "lab", 3);
  CHECK(path.filename() == "lab_run000003.ledger.json");
  auto none = read_run_record(path);
  REQUIRE(none);
  CHECK_FALSE(none->has_value());
  std::ofstream(path) << "{\"format\": \"something else\"}";
  auto other = read_run_record(path);
  REQUIRE_FALSE(other);
  CHECK(other.error().what.find(path.string()) != std::string::npos);
  std::ofstream(path) << "{\"format\": ";
  auto bad = read_run_record(path);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().what.find(path.string()) != std::string::npos);
}

TEST_CASE("update_run_record from two processes at once loses no change" * doctest::timeout(60)) {
  test::ScratchDir dir("ledger-record");
  const auto path = run_record_path(dir.path(), "lab", 1);
  constexpr int kUpdates = 100;
  pid_t children[2] = {-1, -1};
  for (int i = 0; i < 2; ++i) {
    children[i] = ::fork();
    REQUIRE(children[i] >= 0);
    if (children[i] == 0) {
      int failures = 0;
      for (int n = 0; n < kUpdates; ++n) {
        auto ok = update_run_record(path, [&](RunRecord& r) {
          ++r.channel("adc0").written;                       // both processes: one counter
          ++r.part(i == 0 ? "first" : "second").restarts;    // each its own
        });
        if (!ok) ++failures;
      }
      ::_exit(failures == 0 ? 0 : 1);
    }
  }
  for (pid_t child : children) {
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  auto r = read_run_record(path);
  REQUIRE(r);
  REQUIRE(r->has_value());
  const RunRecord& record = **r;
  REQUIRE(record.find_channel("adc0") != nullptr);
  CHECK(record.find_channel("adc0")->written == 2 * kUpdates);
  REQUIRE(record.parts.size() == 2);
  for (const PartMark& p : record.parts) CHECK(p.restarts == kUpdates);
  CHECK_FALSE(std::filesystem::exists(path.string() + ".tmp"));
}

}  // TEST_SUITE

// `weir audit` as a user runs it: the real binary on runs recorded by the real recorder, its exit
// status (0 exact, 5 duplicated or unaccounted, 1 no run to audit), its text and the shape of its
// --json lines; and a killed `weir record`'s file reported SWMR-marked until `weir repair`.
#include <doctest/doctest.h>

#include <signal.h>

#include <sstream>

#include "json.hpp"
#include "recorded_run.hpp"
#include "run_weir.hpp"
#include "weir/ledger/audit.hpp"

using namespace weir;
using namespace weir::test;

namespace {

constexpr std::uint64_t kBlocks = 30;
constexpr int kExitUnaccounted = 5;

std::vector<nlohmann::json> json_lines(const std::string& out) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    lines.push_back(parse_json(line));
    REQUIRE_MESSAGE(lines.back().is_object(), line);
  }
  return lines;
}

// Whether this process's child `pid` has a record:hdf5 consumer row on `channel`.
bool recorder_registered(const core::Arena& arena, pid_t pid) {
  for (const core::ChannelInfo& c : core::list_channels(arena))
    for (const core::ConsumerInfo& r : c.consumers)
      if (r.alive && r.pid == static_cast<std::uint32_t>(pid) && r.kind == "record:hdf5") return true;
  return false;
}

}  // namespace

TEST_SUITE("recorders.ledger.cli") {

TEST_CASE("weir audit: exit 0 and the ledger in text and JSON for an exact run, exit 5 once a segment is there twice" *
          doctest::timeout(90)) {
  ScratchDir dir("ledger-cli");
  const std::string arena = record_run(dir.str(), 2, {"adc0", "adc1"}, 2, kBlocks);

  const RunResult text = run_weir({"audit", dir.str()});
  INFO(text.out, text.err);
  CHECK(text.exit_code == 0);
  CHECK(contains(text.out, "run 2 of arena '" + arena + "'"));
  CHECK(contains(text.out, segment_file(dir.path(), arena, 2, 0).string() + ": closed, " + std::to_string(2 * kBlocks) +
                               " blocks"));
  CHECK(contains(text.out, "channel adc0: written 60, recorded 60, duplicated 0, unaccounted 0"));
  CHECK(contains(text.out, "run record: none"));
  CHECK(contains(text.out, "exact: "));

  const RunResult json = run_weir({"audit", dir.str(), "--json"});
  CHECK(json.exit_code == 0);
  std::vector<nlohmann::json> lines = json_lines(json.out);
  REQUIRE(lines.size() == 3);
  for (int i = 0; i < 2; ++i) {
    const nlohmann::json& c = lines[static_cast<std::size_t>(i)];
    CHECK(c["channel"] == (i == 0 ? "adc0" : "adc1"));
    CHECK(c["written"] == 2 * kBlocks);
    CHECK(c["recorded"] == 2 * kBlocks);
    CHECK(c["duplicates"] == 0);
    CHECK(c["unaccounted"] == 0);
    CHECK(c["first"] == 0);
    CHECK(c["end"] == 2 * kBlocks);
    CHECK(c["durable"] == 0);
    REQUIRE(c["gaps"].is_object());
    CHECK(c["gaps"].size() == h5::kGapReasonCount);
    for (std::string_view reason : h5::kGapReasonNames) CHECK(c["gaps"][std::string(reason)] == 0);
  }
  const nlohmann::json& run = lines[2];
  CHECK(run["run"] == 2);
  CHECK(run["exact"] == true);
  REQUIRE(run["files"].size() == 2);
  CHECK(run["files"][0]["path"] == segment_file(dir.path(), arena, 2, 0).string());
  CHECK(run["files"][0]["state"] == "closed");

  std::filesystem::copy_file(segment_file(dir.path(), arena, 2, 1), segment_file(dir.path(), arena, 2, 2));
  const RunResult twice = run_weir({"audit", dir.str(), "--json"});
  CHECK(twice.exit_code == kExitUnaccounted);
  lines = json_lines(twice.out);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0]["duplicates"] == kBlocks);
  CHECK(lines[2]["exact"] == false);
  const RunResult twice_text = run_weir({"audit", dir.str()});
  CHECK(twice_text.exit_code == kExitUnaccounted);
  CHECK(contains(twice_text.out, "NOT exact: " + std::to_string(2 * kBlocks) + " duplicated, 0 unaccounted"));

  // The copy gone and the first segment lost: the run record says the run began at block 0.
  std::filesystem::remove(segment_file(dir.path(), arena, 2, 2));
  std::filesystem::remove(segment_file(dir.path(), arena, 2, 0));
  REQUIRE(ledger::update_run_record(ledger::run_record_path(dir.path(), arena, 2), [&](ledger::RunRecord& r) {
    r.run = 2;
    for (const char* name : {"adc0", "adc1"}) r.channel(name).first_sequence = 0;
  }));
  const RunResult hole = run_weir({"audit", dir.str()});
  INFO(hole.out);
  CHECK(hole.exit_code == kExitUnaccounted);
  CHECK(contains(hole.out, "channel adc1: written 60, recorded 30, duplicated 0, unaccounted 30"));
  CHECK(contains(hole.out, "NOT exact: 0 duplicated, " + std::to_string(2 * kBlocks) + " unaccounted"));
}

TEST_CASE("weir audit names every reason of the format: gap rows and gap-flagged rows of the writers' reasons, in "
          "text and JSON" *
          doctest::timeout(90)) {
  ScratchDir dir("ledger-cli");
  const std::string arena = record_run(dir.str(), 3, {"adc0"}, 1, kBlocks);
  const std::filesystem::path file = segment_file(dir.path(), arena, 3, 0);
  const auto flagged = [](h5::GapReason r) { return core::kBlockGapFlag | static_cast<std::uint32_t>(r); };
  flag_gap_blocks(file, "adc0", 5, 5, flagged(h5::GapReason::kernel_drop));
  flag_gap_blocks(file, "adc0", 20, 2, flagged(h5::GapReason::malformed));
  add_gap_row(file, "adc0", kBlocks, 4, h5::GapReason::timeout);
  add_gap_row(file, "adc0", kBlocks + 4, 3, h5::GapReason::late);
  add_gap_row(file, "adc0", kBlocks + 7, 2, h5::GapReason::driver_error);

  const RunResult text = run_weir({"audit", dir.str()});
  INFO(text.out, text.err);
  CHECK(text.exit_code == 0);
  CHECK(contains(text.out, "channel adc0: written 39, recorded 23, duplicated 0, unaccounted 0, lost 16"));
  CHECK(contains(text.out, "gaps: kernel_drop 5, malformed 2, late 3, timeout 4, driver_error 2"));
  const std::vector<nlohmann::json> lines = json_lines(run_weir({"audit", dir.str(), "--json"}).out);
  REQUIRE(lines.size() == 2);
  const nlohmann::json& gaps = lines[0]["gaps"];
  CHECK(gaps.size() == h5::kGapReasonCount);
  CHECK(gaps["kernel_drop"] == 5);
  CHECK(gaps["malformed"] == 2);
  CHECK(gaps["late"] == 3);
  CHECK(gaps["timeout"] == 4);
  CHECK(gaps["driver_error"] == 2);
  CHECK(gaps["source_loss"] == 0);
  CHECK(gaps["lapped"] == 0);
  CHECK(lines[0]["lost"] == 16);
  CHECK(lines[1]["exact"] == true);
}

TEST_CASE("weir audit: exit 1 naming the directory when it holds no run, or several and no --run" *
          doctest::timeout(90)) {
  ScratchDir dir("ledger-cli");
  const RunResult empty = run_weir({"audit", dir.str()});
  CHECK(empty.exit_code == 1);
  CHECK(contains(empty.err, "no recording in " + dir.str()));
  const RunResult missing = run_weir({"audit", dir.file("nothing-here")});
  CHECK(missing.exit_code == 1);
  CHECK(contains(missing.err, dir.file("nothing-here")));

  const std::string arena = record_run(dir.str(), 4, {"adc0"}, 1, kBlocks);
  std::filesystem::copy_file(segment_file(dir.path(), arena, 4, 0), segment_file(dir.path(), arena, 5, 0));
  const RunResult several = run_weir({"audit", dir.str()});
  CHECK(several.exit_code == 1);
  CHECK(contains(several.err, dir.str()));
  CHECK(contains(several.err, "--run"));
  CHECK(run_weir({"audit", dir.str(), "--run", "5"}).exit_code == 0);
  CHECK(run_weir({"audit", dir.str(), "--run", "5", "--arena", arena}).exit_code == 0);
  CHECK(run_weir({"audit", dir.str(), "--run", "5", "--arena", "other"}).exit_code == 1);
  CHECK(run_weir({"audit", dir.str(), "--run", "6"}).exit_code == 1);
  CHECK(run_weir({"audit"}).exit_code == 2);

  // The run record beside run 5: a tail after its fault, and its stop, faults and parts printed.
  REQUIRE(ledger::update_run_record(ledger::run_record_path(dir.path(), arena, 5), [&](ledger::RunRecord& r) {
    r.run = 5;
    r.arena = arena;
    r.writer = "weir run";
    r.started_ns = 1'700'000'000'000'000'000;
    r.stopped_ns = 1'700'000'060'000'000'000;
    r.channel("adc0").written = kBlocks + 12;
    r.faults.push_back(ledger::Fault{"rec", "disk_error", "No space left on device", 28, 1'700'000'050'000'000'000});
    ledger::PartMark& p = r.part("rec");
    p.role = "record";
    p.state = "given up";
    p.last_exit = "exit 3";
    p.restarts = 6;
    p.essential = true;
  }));
  const RunResult recorded = run_weir({"audit", dir.str(), "--run", "5"});
  INFO(recorded.out, recorded.err);
  CHECK(recorded.exit_code == 0);
  CHECK(contains(recorded.out, "gaps: disk_error 12 (of them 12 after the files' last block)"));
  CHECK(contains(recorded.out, "channel adc0: written 42, recorded 30, duplicated 0, unaccounted 0, lost 12"));
  CHECK(contains(recorded.out, "run record: written by weir run, started 2023-11-14T22:13:20.000Z, stopped "
                               "2023-11-14T22:14:20.000Z"));
  CHECK(contains(recorded.out, "fault: rec: No space left on device (disk_error, errno 28)"));
  CHECK(contains(recorded.out, "part rec (record, essential): given up, 6 restarts, last exit exit 3"));
  const std::vector<nlohmann::json> lines = json_lines(run_weir({"audit", dir.str(), "--run", "5", "--json"}).out);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0]["gaps"]["disk_error"] == 12);
  CHECK(lines[0]["tail"] == 12);
  CHECK(lines[0]["end"] == kBlocks + 12);
  CHECK(lines[1]["record"] == true);
  CHECK(lines[1]["faults"] == 1);
}

TEST_CASE("weir audit: a killed weir record's file is swmr-marked (with the repair to run), repaired after weir repair" *
          doctest::timeout(90)) {
  ScratchArena scratch("ledgerkill");
  ScratchDir dir("ledger-cli");
  core::ChannelSpec spec;
  spec.name = "adc0";
  spec.rate_hz = 1e6;
  spec.samples_per_block = kBlockSamples;
  spec.ring_blocks = 32;
  spec.wait_timeout_ns = 10'000'000'000;
  REQUIRE(core::create_channel(scratch.arena(), spec));
  CapturedProcess recorder(command(WEIR_CLI_PATH, {"record", scratch.name(), "--channels", "adc0", "--out", dir.str(),
                                                   "--run", "1", "--flush-ms", "20"}));
  REQUIRE(recorder.valid());
  REQUIRE(within_wait([&] { return recorder_registered(scratch.arena(), recorder.pid()); }));
  publish(scratch.arena(), {"adc0"}, kBlocks);
  // Read live (as a SWMR reader) until the recorder has flushed every block.
  REQUIRE(within_wait([&] {
    auto a = ledger::audit_run(dir.path());
    return a && a->channels.size() == 1 && a->channels[0].recorded == kBlocks;
  }));
  REQUIRE(recorder.signal(SIGKILL));
  CHECK(recorder.wait(kRunTimeout).signal == SIGKILL);

  // The killed recorder's file keeps its NAME.partial: it never reached its final name.
  const std::string closed_name = segment_file(dir.path(), scratch.name(), 1, 0).string();
  const std::string file = closed_name + ".partial";
  CHECK(std::filesystem::exists(file));
  CHECK_FALSE(std::filesystem::exists(closed_name));
  const RunResult marked = run_weir({"audit", dir.str()});
  INFO(marked.out, marked.err);
  CHECK(marked.exit_code == 0);  // every flushed block is there: marks are repairable, not lost blocks
  CHECK(contains(marked.out, file + ": swmr-marked"));
  CHECK(contains(marked.out, "run `weir repair " + file + "`"));
  const std::vector<nlohmann::json> lines = json_lines(run_weir({"audit", dir.str(), "--json"}).out);
  REQUIRE(lines.size() == 2);
  CHECK(lines[1]["files"][0]["state"] == "swmr-marked");
  CHECK(lines[1]["files"][0]["partial"] == true);
  CHECK(contains(marked.out, "not closed yet"));
  CHECK(lines[0]["recorded"] == kBlocks);

  REQUIRE(run_weir({"repair", file}).exit_code == 0);
  const RunResult repaired = run_weir({"audit", dir.str(), "--json"});
  CHECK(repaired.exit_code == 0);
  CHECK(json_lines(repaired.out)[1]["files"][0]["state"] == "repaired");
}

}  // TEST_SUITE

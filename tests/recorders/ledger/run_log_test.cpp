// The runs of a recording directory: run numbers handed out once (across processes, and never below
// what the directory already holds), the run log's rows (CSV quoting, running rows replaced, ended
// rows kept), and the blocks between runs from the runs' records.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "scratch_dir.hpp"
#include "weir/ledger/run_log.hpp"
#include "weir/ledger/run_record.hpp"

using namespace weir::ledger;

TEST_SUITE("recorders.ledger.run_log") {

TEST_CASE("run numbers: one above everything the directory knows, persisted, and a used number refused") {
  weir::test::ScratchDir dir("runnum");
  auto first = allocate_run_number(dir.path(), "daq");
  REQUIRE_MESSAGE(first, first.error().what);
  CHECK(*first == 1);
  CHECK(*allocate_run_number(dir.path(), "daq") == 2);
  // A recording of run 7 (another tool wrote it) and the arena's own highest (9) are above the file.
  std::ofstream(dir.path() / "daq_run000007_0000.h5") << "x";
  CHECK(*allocate_run_number(dir.path(), "daq") == 8);
  CHECK(*allocate_run_number(dir.path(), "daq", 0, 9) == 10);
  auto reused = allocate_run_number(dir.path(), "daq", 10);
  REQUIRE_FALSE(reused);
  CHECK_MESSAGE(reused.error().what.find("run number 10 refused: run numbers up to 10 are already used") != std::string::npos,
                reused.error().what);
  CHECK(*allocate_run_number(dir.path(), "daq", 40) == 40);
  CHECK(*highest_run(dir.path(), "daq") == 40);
  CHECK(*allocate_run_number(dir.path(), "other") == 1);  // numbers are per arena
  // A numbers file that is not one is refused, not guessed past.
  std::ofstream(run_numbers_path(dir.path(), "bad")) << "garbage\n";
  auto bad = allocate_run_number(dir.path(), "bad");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().what.find("refusing to guess the next run number") != std::string::npos);
}

TEST_CASE("four processes allocating 25 numbers each get 100 distinct numbers") {
  weir::test::ScratchDir dir("runnum");
  std::vector<pid_t> kids;
  std::vector<int> pipes;
  for (int p = 0; p < 4; ++p) {
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      close(fds[0]);
      for (int i = 0; i < 25; ++i) {
        auto n = allocate_run_number(dir.path(), "race");
        const std::uint64_t v = n ? *n : 0;
        if (write(fds[1], &v, sizeof v) != sizeof v) _exit(2);
      }
      _exit(0);
    }
    close(fds[1]);
    kids.push_back(child);
    pipes.push_back(fds[0]);
  }
  std::set<std::uint64_t> seen;
  for (std::size_t k = 0; k < kids.size(); ++k) {
    std::uint64_t v = 0;
    while (read(pipes[k], &v, sizeof v) == sizeof v) {
      CHECK(v != 0);
      CHECK_MESSAGE(seen.insert(v).second, "number ", v, " handed out twice");
    }
    close(pipes[k]);
    int status = 0;
    REQUIRE(waitpid(kids[k], &status, 0) == kids[k]);
    CHECK(WEXITSTATUS(status) == 0);
  }
  CHECK(seen.size() == 100);
  CHECK(*seen.rbegin() == 100);
}

TEST_CASE("the run log: rows with commas, quotes and newlines read back; a running row is replaced, an ended one kept") {
  weir::test::ScratchDir dir("runlog");
  const auto path = run_log_path(dir.path(), "daq");
  CHECK(read_run_log(path)->empty());
  RunLogRow r;
  r.run = 3;
  r.start_ns = 1'796'534'263'084'649'611;
  r.title = "background, \"empty\" can";
  r.operator_name = "Zoë";
  r.sample = "line one\nline two";
  r.ended = kRunning;
  r.door = "cli";
  REQUIRE(add_run_log_row(path, r));
  RunLogRow earlier = r;
  earlier.run = 1;
  earlier.ended = "stopped";
  earlier.stop_ns = earlier.start_ns + 5;
  earlier.files = 2;
  earlier.blocks_written = 10;
  earlier.blocks_recorded = 9;
  earlier.blocks_lost = 1;
  earlier.exact = true;
  REQUIRE(*add_run_log_row(path, earlier));
  RunLogRow closed = r;
  closed.ended = "aborted";
  closed.stop_ns = r.start_ns + 1'000'000'000;
  closed.note = "beam lost";
  REQUIRE(*add_run_log_row(path, closed));  // replaces the running row
  RunLogRow again = closed;
  again.ended = "stopped";
  CHECK_FALSE(*add_run_log_row(path, again));  // an ended row stays as the first door wrote it
  auto rows = read_run_log(path);
  REQUIRE_MESSAGE(rows, rows.error().what);
  REQUIRE(rows->size() == 2);
  CHECK((*rows)[0].run == 1);  // ordered by run
  CHECK((*rows)[0].blocks_lost == 1);
  CHECK((*rows)[0].stop_ns == earlier.stop_ns);
  const RunLogRow& back = (*rows)[1];
  CHECK(back.title == r.title);
  CHECK(back.operator_name == "Zoë");
  CHECK(back.sample == "line one\nline two");
  CHECK(back.ended == "aborted");
  CHECK(back.note == "beam lost");
  CHECK(back.start_ns == r.start_ns);
  CHECK(back.stop_ns == closed.stop_ns);
  std::ifstream in(path);
  std::string header;
  std::getline(in, header);
  CHECK(header == run_log_header());
  // A row that does not read is refused naming the file and the row.
  std::ofstream(path, std::ios::app) << "4,not a time,,,,,0,0,0,0,true,stopped,cli,\n";
  auto broken = read_run_log(path);
  REQUIRE_FALSE(broken);
  CHECK_MESSAGE(broken.error().what.find("row 4: a number or time") != std::string::npos, broken.error().what);  // rows are records: a quoted newline stays inside its row
}

TEST_CASE("blocks between runs come from the runs' records; a block in two runs is refused") {
  weir::test::ScratchDir dir("between");
  const auto mark = [&](std::uint64_t run, std::uint64_t first, std::uint64_t written) {
    REQUIRE(update_run_record(run_record_path(dir.path(), "daq", run), [&](RunRecord& r) {
      r.run = run;
      ChannelMark& m = r.channel("adc0");
      m.first_sequence = first;
      m.written = written;
      m.final = true;
      m.arena_created_ns = 42;
    }));
  };
  mark(1, 0, 50);
  mark(2, 59, 109);
  mark(3, 109, 160);
  CHECK(recorded_runs(dir.path(), "daq") == std::vector<std::uint64_t>{1, 2, 3});
  auto between = between_runs(dir.path(), "daq");
  REQUIRE_MESSAGE(between, between.error().what);
  REQUIRE(between->size() == 1);
  CHECK((*between)[0].after_run == 1);
  CHECK((*between)[0].before_run == 2);
  CHECK((*between)[0].blocks() == 9);
  mark(4, 150, 200);
  auto overlap = between_runs(dir.path(), "daq");
  REQUIRE_FALSE(overlap);
  CHECK(overlap.error().what.find("run 4 begins at block 150, inside run 3") != std::string::npos);
}

}  // TEST_SUITE

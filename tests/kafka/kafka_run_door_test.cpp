// The Kafka control topic as a door into an arena's runs (`weir kafka control`): experiment control's
// pl72 starts a run, its job's 6s4t stops it, and the other doors see the same run. Real processes, the
// mock cluster on loopback.
#include <doctest/doctest.h>

#include <signal.h>

#include <string>

#include "kafka_harness.hpp"
#include "scratch_dir.hpp"
#include "weir/core/run_control.hpp"
#include "weir/ledger/run_log.hpp"

using namespace weir;
using namespace weir::test;

TEST_SUITE("kafka.run_door") {

TEST_CASE("pl72 starts the arena's run and its job's 6s4t stops it; every other door is refused naming the run that holds it" *
          doctest::timeout(120)) {
  const std::string control = "weir.runs.control";
  kafka::MockCluster cluster = make_cluster(control);
  ArenaGuard name(unique_name("kdoor"));
  core::Arena arena = make_arena(name.where());
  ScratchDir dir("kafka-door");
  const RunResult enabled = run_weir({"runctl", "enable", name.where(), dir.str()});
  REQUIRE_MESSAGE(enabled.exit_code == 0, enabled.err);
  BackgroundWeir door({"kafka", "control", name.where(), "--brokers", cluster.bootstraps(), "--topic", control});
  REQUIRE_MESSAGE(eventually([&] { return door.output().find("following run control") != std::string::npos; }, kSettle),
                  door.output());
  const core::RunControl rc(arena);
  const auto kafka_run = [&](const std::vector<std::string>& args) {
    std::vector<std::string> all{"kafka", "run"};
    all.insert(all.end(), args.begin(), args.end());
    all.insert(all.end(), {"--brokers", cluster.bootstraps(), "--topic", control});
    const RunResult r = run_weir(all);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  };
  kafka_run({"start", "--job-id", "job-1", "--run-name", "run A", "--metadata", R"({"proposal":"p42"})"});
  REQUIRE_MESSAGE(eventually([&] { return rc.status().state == core::RunState::running; }, kSettle), door.output());
  core::RunStatus s = rc.status();
  CHECK(s.number == 1);
  CHECK(s.door == "kafka");
  CHECK(s.meta.title == "run A");
  CHECK(s.meta.comment == R"(kafka job job-1; metadata {"proposal":"p42"})");
  const RunResult cli = run_weir({"runctl", "start", name.where()});
  CHECK(cli.exit_code == 1);
  CHECK_MESSAGE(cli.err.find("run 1 (started by kafka) is running") != std::string::npos, cli.err);
  kafka_run({"stop", "--job-id", "job-other"});
  REQUIRE_MESSAGE(eventually(
                      [&] {
                        return door.output().find("6s4t job job-other: refused: run 1 (started by kafka) is running, "
                                                  "not this job's") != std::string::npos;
                      },
                      kSettle),
                  door.output());
  CHECK(rc.status().state == core::RunState::running);
  kafka_run({"stop", "--job-id", "job-1"});
  REQUIRE_MESSAGE(eventually([&] { return rc.status().state == core::RunState::idle; }, kSettle), door.output());
  CHECK(rc.status().ended == core::RunEnd::stopped);
  REQUIRE(eventually([&] { return door.output().find("job job-1: run 1 stopped") != std::string::npos; }, kSettle));
  // A run the command line started: the Kafka start is refused, naming it.
  const RunResult started = run_weir({"runctl", "start", name.where(), "--title", "by hand"});
  REQUIRE_MESSAGE(started.exit_code == 0, started.err);
  kafka_run({"start", "--job-id", "job-2", "--run-name", "run B"});
  REQUIRE_MESSAGE(eventually(
                      [&] {
                        return door.output().find("pl72 job job-2 (run B): start refused: run 2 (started by cli) is "
                                                  "running") != std::string::npos;
                      },
                      kSettle),
                  door.output());
  const RunResult stopped = run_weir({"runctl", "stop", name.where()});
  CHECK_MESSAGE(stopped.exit_code == 0, stopped.err);
  REQUIRE(door.signal(SIGINT));
  CHECK_MESSAGE(door.wait_exit(kSettle) == 0, door.output());
  CHECK_MESSAGE(door.output().find("1 run(s) started, 1 stopped, 2 refused") != std::string::npos, door.output());
  auto rows = ledger::read_run_log(ledger::run_log_path(dir.path(), name.where()));
  REQUIRE_MESSAGE(rows, rows.error().what);
  REQUIRE(rows->size() == 2);
  CHECK((*rows)[0].door == "kafka");
  CHECK((*rows)[0].title == "run A");
  CHECK((*rows)[0].ended == "stopped");
  CHECK((*rows)[1].door == "cli");
}

TEST_CASE("a pl72's stop time ends the run there: the recorder records the run's blocks up to it, none past" *
          doctest::timeout(120)) {
  const std::string control = "weir.runs.stop_time";
  kafka::MockCluster cluster = make_cluster(control);
  ArenaGuard name(unique_name("kdoorst"));
  core::Arena arena = make_arena(name.where());
  constexpr double kRate = 1e5;
  constexpr std::uint32_t kBlock = 1000;  // 100 blocks a second
  make_channel(arena, "adc0", kBlock, 256, kRate);
  ScratchDir dir("kafka-door-stop");
  REQUIRE(run_weir({"runctl", "enable", name.where(), dir.str()}).exit_code == 0);
  BackgroundWeir sim({"sim", name.where(), "adc0", "--rate", "1e5", "--block", "1000", "--signal", "noise"});
  BackgroundWeir recorder({"record", name.where(), "--channels", "adc0", "--out", dir.str(), "--controlled"});
  BackgroundWeir door({"kafka", "control", name.where(), "--brokers", cluster.bootstraps(), "--topic", control});
  const core::RunControl rc(arena);
  REQUIRE_MESSAGE(eventually([&] { return door.output().find("following run control") != std::string::npos &&
                                          !rc.recorders().empty(); },
                             kSettle),
                  door.output(), recorder.output());
  // The stop time lies 3 s ahead; the door sets it shortly before it comes, and the recorder must go
  // on recording until then.
  const RunResult started = run_weir({"kafka", "run", "start", "--brokers", cluster.bootstraps(), "--topic", control,
                                      "--job-id", "job-st", "--run-name", "timed", "--stop-time", "now+3"});
  REQUIRE_MESSAGE(started.exit_code == 0, started.err);
  const auto rows = [&] {
    auto r = ledger::read_run_log(ledger::run_log_path(dir.path(), name.where()));
    return r ? *r : std::vector<ledger::RunLogRow>{};
  };
  REQUIRE_MESSAGE(eventually([&] { const auto r = rows(); return r.size() == 1 && r[0].ended == "stopped"; }, kSettle),
                  door.output(), recorder.output());
  const ledger::RunLogRow row = rows()[0];
  CHECK(row.exact);
  CHECK(row.blocks_lost == 0);
  const double seconds = static_cast<double>(row.stop_ns - row.start_ns) / 1e9;
  CHECK_MESSAGE(seconds > 2.0, "the run lasted ", seconds, " s");
  // Every block that began inside the run is in it: the run's length in block periods, give or take
  // the two blocks the start and the stop cut.
  const double periods = seconds * kRate / kBlock;
  CHECK_MESSAGE(static_cast<double>(row.blocks_recorded) >= periods - 2, row.blocks_recorded, " blocks for ", periods,
                " block periods");
  CHECK(static_cast<double>(row.blocks_recorded) <= periods + 2);
}

}  // TEST_SUITE

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

}  // TEST_SUITE

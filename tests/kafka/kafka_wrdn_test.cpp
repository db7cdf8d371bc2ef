// A recorder's hand-off as the ESS file-writer's notice: `weir record --on-close` running `weir kafka
// run written ... {path}` puts one wrdn per closed file on the control topic, read back with a plain
// consumer and weir's verified decoder; with the partition's leader down the command fails, the
// hand-off retries, and once it is back every file still gets exactly one. Real processes, the mock
// cluster on loopback.
#include <doctest/doctest.h>

#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "kafka_harness.hpp"
#include "scratch_dir.hpp"
#include "topic_reader.hpp"
#include "weir/kafka/run_messages.hpp"

using namespace weir;
using namespace weir::test;

namespace {

constexpr std::chrono::seconds kStopWait{30};  // a recorder's stop: the last file closed and handed over

// The names in `dir` ending in `suffix` (hidden ones, files still being made, left out), sorted.
std::vector<std::string> names_ending(const ScratchDir& dir, const std::string& suffix) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    const std::string n = e.path().filename().string();
    if (!n.starts_with('.') && n.ends_with(suffix)) out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : " ") + n;
  return s.empty() ? "(none)" : s;
}

// `weir record` of adc0 into `dir`, a file a second, each handed over as a wrdn of job `job`.
std::vector<std::string> recorder_args(const std::string& arena, const ScratchDir& dir, const std::string& brokers,
                                       const std::string& topic, const std::string& job) {
  std::vector<std::string> args{"record", arena, "--channels", "adc0", "--out", dir.str(), "--rotate-s", "1",
                                "--wait-for-channels", "--on-close-retry-s", "0.2", "--on-close-retry-max-s", "0.5",
                                "--on-close-timeout-s", "20"};
  for (const std::string& a : {std::string(WEIR_CLI_PATH), std::string("kafka"), std::string("run"), std::string("written"),
                               std::string("--brokers"), brokers, std::string("--topic"), topic, std::string("--job-id"),
                               job, std::string("--timeout-s"), std::string("1"), std::string("{path}")})
    args.push_back("--on-close=" + a);
  return args;
}

// The control topic's wrdn messages, decoded, counted per file_name; every one must decode and name `job`.
std::map<std::string, int> wrdn_per_file(const kafka::MockCluster& cluster, const std::string& topic,
                                         std::size_t expected, const std::string& job) {
  const std::vector<RawMessage> messages = read_topic(cluster.bootstraps(), topic, expected, kSettle);
  std::map<std::string, int> per_file;
  for (const RawMessage& m : messages) {
    const auto done = kafka::decode_wrdn(m.value);
    REQUIRE_MESSAGE(done, "message at offset " << m.offset << ": " << done.error().what);
    CHECK(done->job_id == job);
    CHECK(m.key == job);
    CHECK(done->service_id.starts_with("weir-"));
    CHECK_FALSE(done->error_encountered);
    ++per_file[done->file_name];
  }
  CHECK_MESSAGE(messages.size() == expected, messages.size() << " wrdn message(s) on '" << topic << "', "
                                                             << expected << " file(s) handed over");
  return per_file;
}

// Every closed file of `dir` named by exactly one wrdn, and no wrdn for anything else.
void check_one_per_file(const std::map<std::string, int>& per_file, const ScratchDir& dir,
                        const std::vector<std::string>& files) {
  for (const std::string& f : files) {
    const auto it = per_file.find(dir.file(f));
    const int n = it == per_file.end() ? 0 : it->second;
    CHECK_MESSAGE(n == 1, f << ": " << n << " wrdn message(s)");
  }
  for (const auto& [name, n] : per_file)
    CHECK_MESSAGE(std::find(files.begin(), files.end(), std::filesystem::path(name).filename().string()) != files.end(),
                  "a wrdn for " << name << ", which is no closed file of " << dir.str());
}

}  // namespace

TEST_SUITE("kafka.wrdn") {

TEST_CASE("a recorder handing over with `weir kafka run written` puts one wrdn per closed file on the control topic" *
          doctest::timeout(120)) {
  const std::string control = "weir.wrdn.control";
  kafka::MockCluster cluster = make_cluster(control);
  ArenaGuard name(unique_name("kwrdn"));
  core::Arena arena = make_arena(name.where());
  ScratchDir dir("kafka-wrdn");
  BackgroundWeir sim({"sim", name.where(), "adc0", "--rate", "1e4", "--block", "100"});
  BackgroundWeir recorder(recorder_args(name.where(), dir, cluster.bootstraps(), control, "job-17"));
  REQUIRE_MESSAGE(eventually([&] { return names_ending(dir, ".h5.handed").size() >= 3; }, kSettle * 2),
                  "handed over: " << joined(names_ending(dir, ".h5.handed")) << "; files: "
                                  << joined(names_ending(dir, ".h5")) << "\n" << recorder.output());
  REQUIRE(recorder.signal(SIGINT));
  REQUIRE_MESSAGE(recorder.wait_exit(kStopWait) == 0, recorder.output());
  const std::vector<std::string> files = names_ending(dir, ".h5");
  const std::vector<std::string> markers = names_ending(dir, ".h5.handed");
  REQUIRE_MESSAGE(markers.size() == files.size(), "files: " << joined(files) << "; handed over: " << joined(markers));
  check_one_per_file(wrdn_per_file(cluster, control, markers.size(), "job-17"), dir, files);
}

TEST_CASE("with the control topic's leader down the hand-off fails and is retried, and once it is back every file gets exactly one wrdn" *
          doctest::timeout(150)) {
  const std::string control = "weir.wrdn.outage";
  kafka::MockCluster cluster = make_cluster(control);
  ArenaGuard name(unique_name("kwrdo"));
  core::Arena arena = make_arena(name.where());
  ScratchDir dir("kafka-wrdn-outage");
  REQUIRE(cluster.set_down(1));  // the partition's leader: a producer waits for it, then gives up
  BackgroundWeir sim({"sim", name.where(), "adc0", "--rate", "1e4", "--block", "100"});
  BackgroundWeir recorder(recorder_args(name.where(), dir, cluster.bootstraps(), control, "run-5"));
  REQUIRE_MESSAGE(eventually(
                      [&] {
                        return names_ending(dir, ".h5.sha256").size() >= 2 &&
                               recorder.output().find("not delivered") != std::string::npos;
                      },
                      kSettle * 2),
                  "closed: " << joined(names_ending(dir, ".h5.sha256")) << "\n" << recorder.output());
  CHECK_MESSAGE(names_ending(dir, ".h5.handed").empty(), "handed over with the leader down: "
                                                              << joined(names_ending(dir, ".h5.handed")));
  REQUIRE(cluster.set_up(1));
  // Every file closed so far (and the ones closed meanwhile) handed over once the leader is back.
  const auto all_handed = [&] {
    const auto closed = names_ending(dir, ".h5.sha256");
    return closed.size() >= 3 && names_ending(dir, ".h5.handed").size() == closed.size();
  };
  REQUIRE_MESSAGE(eventually(all_handed, kSettle * 2), "closed: " << joined(names_ending(dir, ".h5.sha256"))
                                                                   << "; handed over: "
                                                                   << joined(names_ending(dir, ".h5.handed")) << "\n"
                                                                   << recorder.output());
  REQUIRE(recorder.signal(SIGINT));
  REQUIRE_MESSAGE(recorder.wait_exit(kStopWait) == 0, recorder.output());
  const std::vector<std::string> files = names_ending(dir, ".h5");
  const std::vector<std::string> markers = names_ending(dir, ".h5.handed");
  REQUIRE_MESSAGE(markers.size() == files.size(), "files: " << joined(files) << "; handed over: " << joined(markers));
  const std::string first = read_file(dir.path() / markers.front());
  CHECK_MESSAGE((first.find("\"attempts\": 1,") == std::string::npos && first.find("\"attempts\"") != std::string::npos),
                markers.front() << " was handed over at its first try, with the leader down: " << first);
  // No file missing and, as no command was killed between its delivery and its marker, no duplicate.
  check_one_per_file(wrdn_per_file(cluster, control, markers.size(), "run-5"), dir, files);
}

TEST_CASE("`weir kafka run written` with no broker answering fails within its timeout, naming why, and without a job id is a usage error") {
  const RunResult lost = run_weir({"kafka", "run", "written", "--brokers", "127.0.0.1:1", "--topic", "t", "--job-id", "j",
                                   "--timeout-s", "1", "/data/f.h5"});
  CHECK(lost.exit_code == kExitError);
  CHECK_MESSAGE(lost.err.find("kafka run written /data/f.h5: kafka run: brokers 127.0.0.1:1 topic 't': not delivered "
                              "within 1.0 s") != std::string::npos,
                lost.err);
  const RunResult nojob = run_weir({"kafka", "run", "written", "--brokers", "127.0.0.1:1", "--topic", "t", "/data/f.h5"});
  CHECK(nojob.exit_code == kExitUsage);
  CHECK_MESSAGE(nojob.err.find("--job-id is required") != std::string::npos, nojob.err);
}

}  // TEST_SUITE

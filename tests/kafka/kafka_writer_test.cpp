// The file-writer end to end, all real processes: `weir sim` writes, `weir kafka send` produces
// through a 3-broker mock cluster (replication 3), `weir record --from-kafka` writes the run that
// `weir kafka run start` / `stop` open and close, and the files are read back with the recording
// reader and checked by `weir audit`: exactly the near blocks whose times are in the run, block for
// block, with the partition's leader down mid-run; in lossy mode with every broker down, a
// sink_overflow gap row for each block the sender dropped; bad input refused naming it.
#include <doctest/doctest.h>

#include <signal.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "json.hpp"
#include "kafka_harness.hpp"
#include "scratch_dir.hpp"
#include "weir/core/clock.hpp"
#include "weir/h5/recording.hpp"

namespace weir::test {

namespace {

constexpr std::int64_t kNsPerMs = 1'000'000;

// The writer's one JSON object: the last line of its output that starts with '{'.
nlohmann::json writer_json(const std::string& output) {
  std::string last;
  std::size_t at = 0;
  while (at < output.size()) {
    const std::size_t end = std::min(output.find('\n', at), output.size());
    if (output[at] == '{') last = output.substr(at, end - at);
    at = end + 1;
  }
  return parse_json(last);
}

// A near block's time (ns since the epoch).
std::int64_t block_time(const core::Arena& arena, const std::string& channel, std::uint64_t sequence) {
  auto copier = core::BlockCopier::open(arena, channel);
  REQUIRE(copier);
  core::BlockRecord rec;
  REQUIRE(copier->peek(sequence, rec) == core::BlockStatus::ok);
  return static_cast<std::int64_t>(rec.realtime_ns);
}

// Checks the run's files hold exactly the near blocks whose times are in [start_ns, stop_ns):
// same count, times, sample counts and samples, block for block, and no gap row.
void check_run_is_window(const core::Arena& near, const std::string& channel, const std::vector<std::string>& files,
                         std::int64_t start_ns, std::int64_t stop_ns) {
  auto copier = core::BlockCopier::open(near, channel);
  REQUIRE(copier);
  std::vector<std::uint64_t> expected;
  for (std::uint64_t s = 0; s < copier->head(); ++s) {
    core::BlockRecord rec;
    REQUIRE(copier->peek(s, rec) == core::BlockStatus::ok);
    const auto t = static_cast<std::int64_t>(rec.realtime_ns);
    if (t >= start_ns && t < stop_ns) expected.push_back(s);
  }
  REQUIRE(expected.size() > 100);
  auto recording = h5::open_recording(files);
  REQUIRE_MESSAGE(recording, (recording ? std::string() : recording.error().what));
  REQUIRE(recording->channels.size() == 1);
  const h5::RecordedChannel& c = recording->channels[0];
  CHECK(c.name == channel);
  CHECK(c.gaps.empty());
  CHECK(c.missing() == 0);
  REQUIRE(c.blocks.size() == expected.size());
  h5::SampleReader samples(*recording, c);
  std::vector<std::byte> block(copier->block_bytes());
  std::uint64_t differ = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    core::BlockRecord rec;
    REQUIRE(copier->copy(expected[i], block, rec) == core::BlockStatus::ok);
    auto got = samples.block(i, 1 << 20);
    REQUIRE(got);
    const std::size_t bytes = std::size_t{rec.samples} * copier->sample_bytes();
    if (c.blocks[i].samples != rec.samples || c.blocks[i].realtime_ns != rec.realtime_ns || got->size() != bytes ||
        std::memcmp(got->data(), block.data(), bytes) != 0)
      ++differ;
  }
  CHECK_MESSAGE(differ == 0, differ << " of " << expected.size() << " blocks differ");
}

}  // namespace

TEST_SUITE("kafka.writer") {

TEST_CASE("pl72 to 6s4t with the leader down mid-run: the file holds exactly the run's blocks, and weir audit passes" *
          doctest::timeout(90)) {
  const std::string topic = "weir.fw.data", control = "weir.fw.control";
  kafka::MockCluster cluster = make_cluster(topic);
  REQUIRE(cluster.create_topic(control, 1, 3));
  ArenaGuard near_name(unique_name("kfwnear"));
  core::Arena near = make_arena(near_name.where());
  ScratchDir dir("kafka-writer");
  constexpr std::uint64_t kBlocks = 800;  // 4 s at 200 blocks/s
  make_channel(near, "adc0", 1000, 1024, 2e5);
  BackgroundWeir send({"kafka", "send", near_name.where(), "--brokers", cluster.bootstraps(), "--topic", topic,
                       "--name", "out", "--channel", "adc0"});
  BackgroundWeir writer({"record", "fw", "--from-kafka", cluster.bootstraps(), "--topic", topic, "--source", "adc0",
                         "--control-topic", control, "--out", dir.str(), "--runs", "1", "--json"});
  REQUIRE_MESSAGE(eventually([&] { return writer.output().find("waiting for run starts") != std::string::npos; },
                             kSettle),
                  writer.output());
  REQUIRE_MESSAGE(eventually([&] { return key_u64(near, "kafka.out.channels") == 1; }, kSettle), send.output());
  BackgroundWeir sim({"sim", near_name.where(), "adc0", "--rate", "2e5", "--block", "1000", "--blocks",
                      std::to_string(kBlocks), "--signal", "noise", "--seed", "7"});
  REQUIRE(eventually([&] { return head_of(near, "adc0") > 100; }, kSettle));
  const std::int64_t start_ms = block_time(near, "adc0", 100) / kNsPerMs + 1;  // the run starts inside block 100,
                                                                                // before the start reaches the writer
  const RunResult started = run_weir({"kafka", "run", "start", "--brokers", cluster.bootstraps(), "--topic", control,
                                      "--job-id", "job-fw-1", "--run-name", "run 7", "--filename", "run_7.nxs",
                                      "--start-time", std::to_string(start_ms), "--metadata", R"({"proposal":"p42"})"});
  REQUIRE_MESSAGE(started.exit_code == kExitOk, started.err);
  CHECK(started.out == "job-fw-1\n");
  REQUIRE(eventually([&] { return writer.output().find("run start job job-fw-1") != std::string::npos; }, kSettle));
  REQUIRE(cluster.set_down(1));  // the partition's leader
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  REQUIRE(cluster.set_up(1));
  // The stop lies ahead of the data, as experiment control's does: what the writer reads before the
  // stop reaches it is all before the stop time.
  const std::int64_t stop_ms = core::realtime_ns() / kNsPerMs + 600;
  REQUIRE(head_of(near, "adc0") + 150 < kBlocks);  // the sim is still writing well past the stop
  const RunResult stopped = run_weir({"kafka", "run", "stop", "--brokers", cluster.bootstraps(), "--topic", control,
                                      "--job-id", "job-fw-1", "--stop-time", std::to_string(stop_ms)});
  REQUIRE_MESSAGE(stopped.exit_code == kExitOk, stopped.err);
  CHECK(sim.wait_exit(kSettle) == kExitOk);
  REQUIRE_MESSAGE(writer.wait_exit(kSettle) == kExitOk, writer.output());
  const nlohmann::json j = writer_json(writer.output());
  REQUIRE_MESSAGE(j.is_object(), writer.output());
  REQUIRE(j["runs"].size() == 1);
  const nlohmann::json& run = j["runs"][0];
  CHECK(run["job_id"] == "job-fw-1");
  CHECK(run["run"] == 7);
  CHECK(run["ended_by"] == "sources");
  CHECK(run["gaps"] == 0);
  CHECK(j["late"] == 0);  // no duplicate reached the staging channel
  CHECK(j["gap_blocks_received"] == 0);
  const std::vector<std::string> files = run["files"].get<std::vector<std::string>>();
  REQUIRE(files.size() == 1);
  CHECK(files[0] == dir.file("run_7.h5"));
  check_run_is_window(near, "adc0", files, start_ms * kNsPerMs, stop_ms * kNsPerMs);
  CHECK(run["blocks"] == run["channels"][0]["copied"]);
  CHECK(run["channels"][0]["gap_blocks"] == 0);
  const RunResult audit = run_weir({"audit", dir.str()});
  CHECK_MESSAGE(audit.exit_code == kExitOk, audit.out << audit.err);
  send.signal(SIGTERM);
  CHECK(send.wait_exit(kSettle) == kExitOk);
}

TEST_CASE("lossy with every broker down: the run's sink_overflow gap rows are the sender's drops" * doctest::timeout(90)) {
  const std::string topic = "weir.fwl.data", control = "weir.fwl.control";
  kafka::MockCluster cluster = make_cluster(topic);
  REQUIRE(cluster.create_topic(control, 1, 3));
  ArenaGuard near_name(unique_name("kfwlossy"));
  core::Arena near = make_arena(near_name.where());
  ScratchDir dir("kafka-writer-lossy");
  make_channel(near, "adc0", 256, 1024);
  BackgroundWeir send({"kafka", "send", near_name.where(), "--brokers", cluster.bootstraps(), "--topic", topic,
                       "--name", "out", "--lossy", "--queue", "50", "-X", "reconnect.backoff.max.ms=500"});
  BackgroundWeir writer({"record", "fwl", "--from-kafka", cluster.bootstraps(), "--topic", topic, "--source", "adc0",
                         "--control-topic", control, "--out", dir.str(), "--runs", "1", "--json", "--ring", "1024"});
  REQUIRE_MESSAGE(eventually([&] { return writer.output().find("waiting for run starts") != std::string::npos; },
                             kSettle),
                  writer.output());
  REQUIRE(run_weir({"kafka", "run", "start", "--brokers", cluster.bootstraps(), "--topic", control, "--job-id", "lossy",
                    "--filename", "lossy.nxs", "--start-time", "now-1"})
              .exit_code == kExitOk);
  REQUIRE(eventually([&] { return writer.output().find("run start job lossy") != std::string::npos; }, kSettle));
  REQUIRE_MESSAGE(eventually([&] { return key_u64(near, "kafka.out.channels") == 1; }, kSettle), send.output());
  auto w = core::ChannelWriter::open(near, "adc0");
  REQUIRE(w);

  publish_paced(near, *w, "out", 100, send);
  for (int b = 1; b <= 3; ++b) REQUIRE(cluster.set_down(b));
  publish_numbered(*w, 300);  // the queue takes 50; the rest cannot go
  REQUIRE(eventually([&] { return key_u64(near, "kafka.out.sent") + key_u64(near, "kafka.out.dropped") == 400; }, kSettle));
  const std::uint64_t dropped = key_u64(near, "kafka.out.dropped");
  CHECK(dropped >= 200);
  for (int b = 1; b <= 3; ++b) REQUIRE(cluster.set_up(b));
  REQUIRE(eventually([&] { return key_u64(near, "kafka.out.delivered") == key_u64(near, "kafka.out.sent"); }, kSettle));
  publish_paced(near, *w, "out", 100, send);  // its first message carries the last run of drops
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(run_weir({"kafka", "run", "stop", "--brokers", cluster.bootstraps(), "--topic", control, "--job-id", "lossy"})
              .exit_code == kExitOk);
  REQUIRE(eventually([&] { return writer.output().find("run stop job lossy") != std::string::npos; }, kSettle));
  publish_paced(near, *w, "out", 10, send);  // after the stop: ends the run, and is not in it
  REQUIRE_MESSAGE(writer.wait_exit(kSettle) == kExitOk, writer.output());
  CHECK(key_u64(near, "kafka.out.dropped") == dropped);
  const nlohmann::json j = writer_json(writer.output());
  REQUIRE_MESSAGE(j.is_object(), writer.output());
  REQUIRE(j["runs"].size() == 1);
  const nlohmann::json& run = j["runs"][0];
  CHECK(run["ended_by"] == "sources");
  CHECK(run["blocks"] == 500 - dropped);
  CHECK(run["gap_blocks"] == dropped);
  CHECK(run["channels"][0]["after"] >= 1);  // the first block after the stop ended the run
  const std::vector<std::string> files = run["files"].get<std::vector<std::string>>();
  auto recording = h5::open_recording(files);
  REQUIRE_MESSAGE(recording, (recording ? std::string() : recording.error().what));
  REQUIRE(recording->channels.size() == 1);
  const h5::RecordedChannel& c = recording->channels[0];
  CHECK(c.blocks.size() == 500 - dropped);
  std::uint64_t overflow = 0, other = 0;
  for (const h5::RecordedGap& g : c.gaps)
    (g.reason == static_cast<std::uint32_t>(h5::GapReason::sink_overflow) ? overflow : other) += g.blocks;
  CHECK(overflow == dropped);
  CHECK(other == 0);
  CHECK(c.missing() == dropped);
  std::uint64_t misplaced = 0;  // each block carries its near sequence: it sits at it
  h5::SampleReader samples(*recording, c);
  for (std::size_t i = 0; i < c.blocks.size(); ++i) {
    auto got = samples.block(i, 1 << 20);
    REQUIRE(got);
    std::uint64_t seq = 0;
    std::memcpy(&seq, got->data(), sizeof seq);
    misplaced += seq != c.blocks[i].sequence ? 1 : 0;
  }
  CHECK(misplaced == 0);
  const RunResult audit = run_weir({"audit", dir.str()});
  CHECK_MESSAGE(audit.exit_code == kExitOk, audit.out << audit.err);
  send.signal(SIGTERM);
  CHECK(send.wait_exit(kSettle) == kExitOk);
}

TEST_CASE("bad input is refused naming it: no brokers, a file name leaving --out, a stop for an unknown job" *
          doctest::timeout(60)) {
  ScratchDir dir("kafka-writer-bad");
  const RunResult no_brokers = run_weir({"kafka", "run", "start", "--brokers", "127.0.0.1:1", "--topic", "c",
                                         "--timeout-s", "1"});
  CHECK(no_brokers.exit_code == kExitError);
  CHECK_MESSAGE(no_brokers.err.find("127.0.0.1:1") != std::string::npos, no_brokers.err);
  const RunResult writer_no_brokers = run_weir({"record", "fw", "--from-kafka", "127.0.0.1:1", "--topic", "d",
                                                "--source", "adc0", "--control-topic", "c", "--out", dir.str(),
                                                "--connect-timeout-s", "1"});
  CHECK(writer_no_brokers.exit_code == kExitError);
  CHECK_MESSAGE(writer_no_brokers.err.find("127.0.0.1:1") != std::string::npos, writer_no_brokers.err);
  const RunResult no_source = run_weir({"record", "fw", "--from-kafka", "127.0.0.1:1", "--topic", "d", "--out", dir.str()});
  CHECK(no_source.exit_code == kExitUsage);
  CHECK_MESSAGE(no_source.err.find("--source") != std::string::npos, no_source.err);

  const std::string topic = "weir.fwb.data", control = "weir.fwb.control";
  kafka::MockCluster cluster = make_cluster(topic);
  REQUIRE(cluster.create_topic(control, 1, 3));
  BackgroundWeir writer({"record", "fwb", "--from-kafka", cluster.bootstraps(), "--topic", topic, "--source", "adc0",
                         "--control-topic", control, "--out", dir.str(), "--json"});
  REQUIRE_MESSAGE(eventually([&] { return writer.output().find("waiting for run starts") != std::string::npos; },
                             kSettle),
                  writer.output());
  REQUIRE(run_weir({"kafka", "run", "start", "--brokers", cluster.bootstraps(), "--topic", control, "--job-id", "esc",
                    "--filename", "../escape.nxs"})
              .exit_code == kExitOk);
  REQUIRE(run_weir({"kafka", "run", "stop", "--brokers", cluster.bootstraps(), "--topic", control, "--job-id",
                    "nosuch"})
              .exit_code == kExitOk);
  CHECK_MESSAGE(eventually([&] { return writer.output().find("filename '../escape.nxs' is not a file inside --out") !=
                                        std::string::npos; },
                           kSettle),
                writer.output());
  CHECK_MESSAGE(eventually([&] { return writer.output().find("run stop for unknown job_id 'nosuch'") != std::string::npos; },
                           kSettle),
                writer.output());
  writer.signal(SIGTERM);
  REQUIRE_MESSAGE(writer.wait_exit(kSettle) == kExitOk, writer.output());
  const nlohmann::json j = writer_json(writer.output());
  REQUIRE_MESSAGE(j.is_object(), writer.output());
  CHECK(j["runs"].empty());
  CHECK(j["starts_refused"] == 1);
  CHECK(j["stops_unknown"] == 1);
  CHECK_FALSE(std::filesystem::exists(dir.path().parent_path() / "escape.h5"));
}

}  // TEST_SUITE

}  // namespace weir::test

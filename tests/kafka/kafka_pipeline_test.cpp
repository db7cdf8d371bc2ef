// Kafka parts in pipeline files: `weir check` refuses bad settings naming the file, the line and the
// part; examples/pipelines/kafka_loopback.lua, pointed at a mock cluster, runs under `weir run`
// (sim -> kafka "send" -> topic -> driver "kafka" -> a channel of the same arena) with the Kafka
// rates in its status lines and every block the far side got identical to the near one.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "kafka_harness.hpp"
#include "scratch_dir.hpp"

namespace weir::test {

namespace {

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (std::size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size()) text.replace(at, from.size(), to);
}

// `weir check` of a pipeline holding one kafka part with `settings`; its result.
RunResult check_part(const ScratchDir& dir, const std::string& part) {
  const std::string path = dir.file("p.lua");
  std::ofstream(path) << "arena { name = \"" << unique_name("kcheck") << "\" }\n"
                      << "channel \"adc0\" { rate = 1e5, block = 1000 }\n"
                      << "driver \"sim\" { channels = { \"adc0\" } }\n"
                      << part << "\n";
  return run_weir({"check", path});
}

}  // namespace

TEST_SUITE("kafka.pipeline") {

TEST_CASE("weir check names the file, the line and the kafka part of a bad setting") {
  ScratchDir dir("kpipe");
  const std::string where = dir.file("p.lua") + ":4: ";
  const std::string good = "brokers = \"127.0.0.1:9092,127.0.0.1:9093\", topic = \"t\"";
  RunResult r = check_part(dir, "kafka \"send\" { name = \"daq1\", " + good + ", channels = { \"adc*\" } }");
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(contains(r.out, "kafka \"daq1\" (send) process  reads adc0 (adc*) -> topic t at 127.0.0.1:9092,127.0.0.1:9093"));
  r = check_part(dir, "kafka \"send\" { name = \"daq1\", brokers = \"kafka1\", topic = \"t\" }");
  CHECK(r.exit_code != 0);
  CHECK_MESSAGE(contains(r.err, where + "kafka \"daq1\": 'brokers': broker 'kafka1' in \"kafka1\" is not HOST:PORT"), r.err);
  r = check_part(dir, "kafka \"send\" { name = \"daq1\", brokers = \"k1:9092,k2:99999\", topic = \"t\" }");
  CHECK_MESSAGE(contains(r.err, where + "kafka \"daq1\": 'brokers': broker 'k2:99999'"), r.err);
  r = check_part(dir, "kafka \"send\" { name = \"daq1\", brokers = \"k1:9092\" }");
  CHECK_MESSAGE(contains(r.err, where + "kafka \"daq1\": 'topic' is required"), r.err);
  r = check_part(dir, "kafka \"send\" { name = \"daq1\", " + good + ", properties = { [\"acks\"] = \"some\" } }");
  CHECK_MESSAGE(contains(r.err, where + "kafka \"daq1\": 'properties': librdkafka property acks=some"), r.err);
  r = check_part(dir, "kafka \"send\" { name = \"daq1\", " + good + ", lossy = \"yes\" }");
  CHECK_MESSAGE(contains(r.err, where + "kafka \"daq1\": 'lossy'"), r.err);
  r = check_part(dir, "kafka \"send\" { name = \"daq1\", " + good + ", topik = \"t\" }");
  CHECK_MESSAGE(contains(r.err, "unknown key 'topik' (did you mean 'topic'?)"), r.err);
  r = check_part(dir, "kafka \"receive\" { " + good + " }");
  CHECK_MESSAGE(contains(r.err, where + "unknown kafka part \"receive\""), r.err);
  const std::string two = "channel \"a\" { rate = 1e5, block = 1000 } channel \"b\" { rate = 1e5, block = 1000 } ";
  r = check_part(dir, two + "driver \"kafka\" { name = \"far\", channels = { \"a\", \"b\" }, " + good + " }");
  CHECK_MESSAGE(contains(r.err, where + "driver \"far\": 'channels' must name exactly one channel"), r.err);
  r = check_part(dir, two + "driver \"kafka\" { name = \"far\", channels = { \"a\" }, topic = \"t\" }");
  CHECK_MESSAGE(contains(r.err, where + "driver \"far\": 'brokers' is required"), r.err);
}

TEST_CASE("the example pipeline runs on a mock cluster: rates in the status, far blocks identical" *
          doctest::timeout(90)) {
  kafka::MockCluster cluster = make_cluster("lab_daq1_data");
  REQUIRE(cluster.create_topic("lab_daq1_status", 1, 3));
  ScratchDir dir("kpipe");
  std::string text = read_file(WEIR_SOURCE_DIR "/examples/pipelines/kafka_loopback.lua");
  REQUIRE(contains(text, "name = \"kafka_loopback\""));
  const std::string arena_name = unique_name("kloop");
  ArenaGuard guard(arena_name);
  replace_all(text, "name = \"kafka_loopback\"", "name = \"" + arena_name + "\"");
  replace_all(text, "brokers = \"127.0.0.1:9092\"", "brokers = \"" + cluster.bootstraps() + "\"");
  const std::string path = dir.file("kafka_loopback.lua");
  std::ofstream(path) << text;
  const RunResult r = run_weir({"run", path, "--duration", "4", "--status-every", "1", "--keep"});
  CHECK_MESSAGE(r.exit_code == 0, r.out << r.err);
  CHECK_MESSAGE(contains(r.out, "| kafka daq1 "), r.out);
  CHECK_MESSAGE(contains(r.out, "| kafka far "), r.out);
  CHECK(contains(r.out, " msg/s "));
  auto arena = core::Arena::open(arena_name);
  REQUIRE(arena);
  // The sender delivered every block both channels published (it stops after the drivers, flushed).
  const std::uint64_t published = head_of(*arena, "adc0") + head_of(*arena, "adc1");
  CHECK(published > 100);
  CHECK(key_u64(*arena, "kafka.daq1.sent") == published);
  CHECK(key_u64(*arena, "kafka.daq1.delivered") == published);
  CHECK(key_u64(*arena, "kafka.daq1.failed") == 0);
  CHECK(key_u64(*arena, "kafka.daq1.dropped") == 0);
  CHECK(key_u64(*arena, "kafka.daq1.channels") == 2);
  CHECK(key_u64(*arena, "kafka.daq1.status_sent") >= 1);
  // The receiver (a driver: stopped first) got a prefix of adc0, block for block; nothing else.
  const std::uint64_t far = head_of(*arena, "far_adc0");
  CHECK(far > 50);
  CHECK(far <= head_of(*arena, "adc0"));
  CHECK(key_u64(*arena, "kafka.far.received") == far);
  CHECK(key_u64(*arena, "kafka.far.gaps") == 0);
  CHECK(key_u64(*arena, "kafka.far.late") == 0);
  CHECK(key_u64(*arena, "kafka.far.other") >= 1);  // adc1's messages share the topic
  // The blocks both rings still hold (256 each, a margin of 16 left), compared block for block.
  const std::uint64_t near_head = head_of(*arena, "adc0");
  const std::uint64_t first = std::max<std::uint64_t>(near_head, far) - 240;
  MESSAGE("adc0 holds blocks up to " << near_head << ", far_adc0 up to " << far << "; compared from " << first);
  REQUIRE(first < far);
  check_identical_as(*arena, "adc0", *arena, "far_adc0", first, far);
}

}  // TEST_SUITE

}  // namespace weir::test

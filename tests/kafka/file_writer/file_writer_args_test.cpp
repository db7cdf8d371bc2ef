// The file-writer's options from command-line text, and what run_file_writer refuses before it
// starts anything; where a run's file goes and which run number a run name gives.
#include <doctest/doctest.h>

#include <atomic>
#include <string>
#include <string_view>
#include <vector>

#include "weir/kafka_file_writer/file_writer.hpp"
#include "weir/kafka_file_writer/file_writer_args.hpp"

namespace weir::test {

namespace {

using kafka::fw::FileWriterArgs;
using kafka::fw::FileWriterOptions;

FileWriterArgs good_args() {
  FileWriterArgs a;
  a.brokers = "127.0.0.1:1";
  a.topics = {"data"};
  a.sources = {"adc0", "adc1=b1"};
  return a;
}

rec::RecordOptions record_to(const std::string& out) {
  rec::RecordOptions r;
  r.out = out;
  return r;
}

// The error run_file_writer returns for `o`, "" when it does not fail before a run.
std::string refusal(const FileWriterOptions& o) {
  const std::atomic<bool> stop{true};
  std::vector<std::string> notices;
  auto report = kafka::fw::run_file_writer(o, stop, nullptr, [&](std::string_view line) { notices.emplace_back(line); });
  return report ? std::string() : report.error().what;
}

}  // namespace

TEST_SUITE("kafka.file_writer.options") {

TEST_CASE("SOURCE and SOURCE=CHANNEL become routes, and an empty side of '=' is refused naming the text") {
  auto plain = kafka::fw::parse_source_route("adc0");
  REQUIRE(plain);
  CHECK(plain->source == "adc0");
  CHECK(plain->channel.empty());
  auto renamed = kafka::fw::parse_source_route("box1.adc0=adc0");
  REQUIRE(renamed);
  CHECK(renamed->source == "box1.adc0");
  CHECK(renamed->channel == "adc0");
  for (const std::string_view bad : {"", "=adc0", "adc0="}) {
    CAPTURE(bad);
    auto route = kafka::fw::parse_source_route(bad);
    REQUIRE_FALSE(route);
    CHECK(route.error().code == core::Errc::invalid_argument);
    CHECK(route.error().what == "--source '" + std::string(bad) + "': give SOURCE or SOURCE=CHANNEL");
  }
}

TEST_CASE("the options take the arguments in ns and bytes, the recorder's options and duration as given") {
  FileWriterArgs a = good_args();
  a.control_topic = "control";
  a.service_id = "fw1";
  a.grace_s = 0.5;
  a.connect_timeout_s = 3;
  a.runs = 2;
  a.ring_blocks = 256;
  a.arena_mb = 16;
  a.newest = true;
  a.properties = {"security.protocol=SASL_SSL", "sasl.mechanism=SCRAM-SHA-512"};
  rec::RecordOptions record = record_to("/data/runs");
  record.run = 9;
  auto o = kafka::fw::writer_options(a, "fw", record);
  REQUIRE_MESSAGE(o, (o ? std::string() : o.error().what));
  CHECK(o->name == "fw");
  CHECK(o->brokers == "127.0.0.1:1");
  CHECK(o->topics == std::vector<std::string>{"data"});
  REQUIRE(o->sources.size() == 2);
  CHECK(o->sources[0].source == "adc0");
  CHECK(o->sources[0].channel.empty());
  CHECK(o->sources[1].source == "adc1");
  CHECK(o->sources[1].channel == "b1");
  CHECK(o->control_topic == "control");
  CHECK(o->service_id == "fw1");
  CHECK(o->grace_ns == 500'000'000);
  CHECK(o->connect_timeout_ns == 3'000'000'000);
  CHECK(o->runs == 2);
  CHECK(o->ring_blocks == 256);
  CHECK(o->arena_bytes == 16ULL << 20);
  CHECK(o->from_newest);
  REQUIRE(o->properties.size() == 2);
  CHECK(o->properties[0] == std::pair<std::string, std::string>{"security.protocol", "SASL_SSL"});
  CHECK(o->properties[1] == std::pair<std::string, std::string>{"sasl.mechanism", "SCRAM-SHA-512"});
  CHECK(o->record.out == "/data/runs");
  CHECK(o->record.run == 9);
  CHECK(o->duration_s == 0);
}

TEST_CASE("the options are refused naming what is missing or wrong") {
  const rec::RecordOptions record = record_to("/data/runs");
  SUBCASE("no --source") {
    FileWriterArgs a = good_args();
    a.sources.clear();
    auto o = kafka::fw::writer_options(a, "fw", record);
    REQUIRE_FALSE(o);
    CHECK(o.error().what.find("--source") != std::string::npos);
  }
  SUBCASE("a bad --source") {
    FileWriterArgs a = good_args();
    a.sources.emplace_back("=x");
    auto o = kafka::fw::writer_options(a, "fw", record);
    REQUIRE_FALSE(o);
    CHECK(o.error().what.find("'=x'") != std::string::npos);
  }
  SUBCASE("no --topic") {
    FileWriterArgs a = good_args();
    a.topics.clear();
    auto o = kafka::fw::writer_options(a, "fw", record);
    REQUIRE_FALSE(o);
    CHECK(o.error().what == "--from-kafka: no --topic");
  }
  SUBCASE("a property without '='") {
    FileWriterArgs a = good_args();
    a.properties = {"acks"};
    auto o = kafka::fw::writer_options(a, "fw", record);
    REQUIRE_FALSE(o);
    CHECK(o.error().what.find("acks") != std::string::npos);
  }
  SUBCASE("--duration with a control topic") {
    FileWriterArgs a = good_args();
    a.control_topic = "control";
    rec::RecordOptions timed = record;
    timed.duration_s = 5;
    auto o = kafka::fw::writer_options(a, "fw", timed);
    REQUIRE_FALSE(o);
    CHECK(o.error().what.find("--duration") != std::string::npos);
  }
}

TEST_CASE("run_file_writer refuses bad options before it makes an arena or talks to a broker") {
  auto o = kafka::fw::writer_options(good_args(), "fw", record_to("/tmp/weir-fw-never-made"));
  REQUIRE(o);
  SUBCASE("a name too long for the staging arena's") {
    o->name = std::string(41, 'n');
    CHECK(refusal(*o).find("1 to 40 bytes") != std::string::npos);
  }
  SUBCASE("no brokers") {
    o->brokers.clear();
    CHECK(refusal(*o).find("no brokers") != std::string::npos);
  }
  SUBCASE("a grace of 0") {
    o->grace_ns = 0;
    CHECK(refusal(*o).find("--grace-s") != std::string::npos);
  }
  SUBCASE("--out a file, not a directory") {
    o->record.out = "/tmp/run.h5";
    CHECK(refusal(*o).find("the directory runs are written in") != std::string::npos);
  }
}

TEST_CASE("a run's file is its pl72 filename inside --out with .h5, and one leaving --out is refused naming it") {
  auto nested = kafka::fw::run_file("/data", "bl5/run_17.nxs");
  REQUIRE(nested);
  CHECK(*nested == "/data/bl5/run_17.h5");
  auto plain = kafka::fw::run_file("/data", "./run_3");
  REQUIRE(plain);
  CHECK(*plain == "/data/run_3.h5");
  for (const std::string bad : {"", "/etc/run.nxs", "../run.nxs", "a/../../run.nxs", ".", "a/.."}) {
    CAPTURE(bad);
    auto file = kafka::fw::run_file("/data", bad);
    REQUIRE_FALSE(file);
    CHECK(file.error().what == "filename '" + bad + "' is not a file inside --out /data");
  }
}

TEST_CASE("a run name's trailing digits are its run number, 0 without any") {
  CHECK(kafka::fw::run_number("run 17") == 17);
  CHECK(kafka::fw::run_number("17") == 17);
  CHECK(kafka::fw::run_number("cosmics_0042") == 42);
  CHECK(kafka::fw::run_number("run 17b") == 0);
  CHECK(kafka::fw::run_number("") == 0);
  CHECK(kafka::fw::run_number("run 99999999999999999999999") == 0);  // past u64: the recorder's next
}

}  // TEST_SUITE

}  // namespace weir::test

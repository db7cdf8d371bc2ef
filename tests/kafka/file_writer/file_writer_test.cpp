// run_file_writer in this process against librdkafka's mock cluster (also in this process): se00
// blocks with known times and a hole in their message counters on the data topic, a pl72 with its
// own start and stop time on the control topic, and the run's HDF5 file read back: exactly the data
// blocks whose times are in [start, stop), unchanged, and the hole as one gap row of its blocks.
#include <doctest/doctest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "arena_guard.hpp"
#include "kafka_producer.hpp"
#include "scratch_dir.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/block_copier.hpp"
#include "weir/h5/recording.hpp"
#include "weir/kafka/codec.hpp"
#include "weir/kafka/mock_cluster.hpp"
#include "weir/kafka/run_control.hpp"
#include "weir/kafka/run_messages.hpp"
#include "weir/kafka_file_writer/file_writer.hpp"

namespace weir::test {

namespace {

constexpr std::uint32_t kSamples = 100;
constexpr double kRateHz = 1e4;
constexpr std::int64_t kBlockNs = 10'000'000;           // kSamples at kRateHz: 10 ms
constexpr std::int64_t kT0 = 1'600'000'000'000'000'000;  // block 0's time (ns since the epoch), a whole ms
constexpr std::int64_t kNsPerMs = 1'000'000;
constexpr auto kSettle = std::chrono::seconds(20);

// The writer's notices, and a wait for one that says something.
class Notices {
 public:
  void add(std::string_view line) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      lines_ += std::string(line) + "\n";
    }
    changed_.notify_all();
  }
  bool wait_for(std::string_view text) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, kSettle, [&] { return lines_.find(text) != std::string::npos; });
  }
  std::string text() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return lines_;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::string lines_;
};

// Block `counter` of source "adc0" as se00: at kT0 + counter block periods, every sample the counter.
void produce_block(TestProducer& producer, kafka::Se00Encoder& encoder, const std::string& topic,
                   std::int64_t counter) {
  std::vector<float> values(kSamples, static_cast<float>(counter));
  kafka::SampleBlock b;
  b.name = "adc0";
  b.counter = counter;
  b.packet_timestamp_ns = kT0 + counter * kBlockNs;
  b.time_delta_ns = 1e9 / kRateHz;
  b.dtype = core::Dtype::f32;
  b.samples = kSamples;
  b.values = std::as_bytes(std::span<const float>(values));
  producer.produce(topic, encoder.encode(b));
}

}  // namespace

TEST_SUITE("kafka.file_writer.run") {

TEST_CASE("a pl72 with a start and stop time: the run's file holds exactly the blocks in the window and the "
          "missing counters as a gap row" *
          doctest::timeout(90)) {
  const std::string topic = "weir.fwm.data", control = "weir.fwm.control";
  auto cluster = kafka::MockCluster::start(1);
  REQUIRE_MESSAGE(cluster, (cluster ? std::string() : cluster.error().what));
  REQUIRE(cluster->create_topic(topic, 1, 1));
  REQUIRE(cluster->create_topic(control, 1, 1));
  ScratchDir dir("kafka-fw-module");

  kafka::fw::FileWriterOptions o;
  o.name = unique_name("fwm");
  o.brokers = cluster->bootstraps();
  o.topics = {topic};
  o.sources = {{"adc0", "ch0"}};
  o.control_topic = control;
  o.runs = 1;
  o.grace_ns = 10'000'000'000;  // the run ends by its sources long before
  o.ring_blocks = 256;
  o.arena_bytes = 16ULL << 20;
  o.record.out = dir.str();
  std::atomic<bool> stop{false};
  Notices notices;
  std::vector<kafka::fw::RunReport> ended;  // on_run: the caller's thread
  auto writer = std::async(std::launch::async, [&] {
    return kafka::fw::run_file_writer(
        o, stop, [&](const kafka::fw::RunReport& r) { ended.push_back(r); },
        [&](std::string_view line) { notices.add(line); });
  });
  const auto stop_writer = [&] {  // however the test ends, the writer's threads are joined before its state goes
    stop.store(true);
    if (writer.valid()) writer.wait();
  };
  struct AtExit {
    std::function<void()> f;
    ~AtExit() { f(); }
  } at_exit{stop_writer};
  REQUIRE_MESSAGE(notices.wait_for("waiting for run starts"), notices.text());

  // Counters 0..59 but for 30, 31 and 32, which the receiver makes 3 source_loss gap blocks.
  TestProducer producer(cluster->bootstraps());
  kafka::Se00Encoder encoder;
  for (std::int64_t c = 0; c < 60; ++c)
    if (c < 30 || c > 32) produce_block(producer, encoder, topic, c);
  producer.flush();
  // The staging channel holds all 60 (57 data and 3 gap blocks) before the run starts, so the run's
  // channel is there when its recorder starts: one made later is found at the recorder's next look
  // for new channels (kDiscoverEveryNs, 200 ms), and this run, its data all there, ends sooner.
  auto staging = core::Arena::open(o.name + "." + std::to_string(::getpid()));
  REQUIRE_MESSAGE(staging, (staging ? std::string() : staging.error().what));
  const auto staged = [&] {
    auto copier = core::BlockCopier::open(*staging, "ch0");
    return copier ? copier->head() : 0;
  };
  const auto until = std::chrono::steady_clock::now() + kSettle;
  while (staged() < 60 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE_MESSAGE(staged() == 60, notices.text());

  // The run: blocks 10 to 49 by time.
  kafka::RunStart start;
  start.job_id = "job-m1";
  start.run_name = "run 3";
  start.filename = "run_3.nxs";
  start.start_time_ms = static_cast<std::uint64_t>((kT0 + 10 * kBlockNs) / kNsPerMs);
  start.stop_time_ms = static_cast<std::uint64_t>((kT0 + 50 * kBlockNs) / kNsPerMs);
  kafka::ControlOptions c;
  c.name = "fwm-control";
  c.brokers = cluster->bootstraps();
  c.topic = control;
  const std::vector<std::byte> pl72 = kafka::encode_pl72(start);
  REQUIRE(kafka::send_control(c, pl72, start.job_id));

  REQUIRE_MESSAGE(writer.wait_for(kSettle) == std::future_status::ready, notices.text());
  auto report = writer.get();
  REQUIRE_MESSAGE(report, (report ? std::string() : report.error().what));
  REQUIRE_MESSAGE(report->runs.size() == 1, notices.text());
  REQUIRE(ended.size() == 1);
  const kafka::fw::RunReport& run = report->runs[0];
  CHECK(ended[0].job_id == run.job_id);
  CHECK(run.job_id == "job-m1");
  CHECK(run.run_name == "run 3");
  CHECK(run.ended_by == "sources");
  CHECK(run.start_ns == kT0 + 10 * kBlockNs);
  CHECK(run.stop_ns == kT0 + 50 * kBlockNs);
  INFO("the writer's notices:\n", notices.text(), "recorder: stopped by ", run.summary.stopped_by, ", ",
       run.summary.blocks, " blocks, ", run.summary.unreachable_blocks, " unreachable");
  CHECK(run.summary.error.empty());
  CHECK(run.summary.run == 3);
  CHECK(run.summary.blocks == 37);
  CHECK(run.summary.gaps == 1);
  CHECK(run.summary.gap_blocks == 3);
  REQUIRE(run.channels.size() == 1);
  const auto& [channel, counts] = run.channels[0];
  CHECK(channel == "ch0");
  CHECK(counts.copied == 37);  // 10..49 less 30..32
  CHECK(counts.gap_blocks == 3);
  CHECK(counts.before == 10);
  CHECK(counts.after >= 1);  // the first block at the stop ended the run
  CHECK(counts.unplaced == 0);
  CHECK(counts.dropped == 0);
  CHECK(report->starts_refused == 0);
  CHECK(report->stops_unknown == 0);
  REQUIRE(report->receivers.size() == 1);
  CHECK(report->receivers[0].received == 57);
  CHECK(report->receivers[0].gaps == 3);
  CHECK(report->receivers[0].late == 0);

  REQUIRE(run.summary.files.size() == 1);
  CHECK(run.summary.files[0] == dir.file("run_3.h5"));
  auto recording = h5::open_recording(run.summary.files);
  REQUIRE_MESSAGE(recording, (recording ? std::string() : recording.error().what));
  REQUIRE(recording->channels.size() == 1);
  const h5::RecordedChannel& ch = recording->channels[0];
  CHECK(ch.name == "ch0");
  CHECK(ch.samples_per_block == kSamples);
  CHECK(ch.rate_hz == doctest::Approx(kRateHz));
  REQUIRE(ch.gaps.size() == 1);
  CHECK(ch.gaps[0].reason == static_cast<std::uint32_t>(h5::GapReason::source_loss));
  CHECK(ch.gaps[0].blocks == 3);
  CHECK(ch.missing() == 3);
  std::vector<std::int64_t> expected;  // the counters in the window, in order
  for (std::int64_t k = 10; k < 50; ++k)
    if (k < 30 || k > 32) expected.push_back(k);
  REQUIRE(ch.blocks.size() == expected.size());
  h5::SampleReader samples(*recording, ch);
  std::uint64_t differ = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const std::int64_t k = expected[i];
    auto got = samples.block(i, 1 << 20);
    REQUIRE(got);
    std::vector<float> values(kSamples, static_cast<float>(k));
    if (ch.blocks[i].realtime_ns != static_cast<std::uint64_t>(kT0 + k * kBlockNs) ||
        ch.blocks[i].samples != kSamples || got->size() != kSamples * sizeof(float) ||
        std::memcmp(got->data(), values.data(), got->size()) != 0)
      ++differ;
  }
  CHECK_MESSAGE(differ == 0, differ << " of " << expected.size() << " blocks differ");
  // The hole sits where the missing counters were: after block 29, before block 33.
  CHECK(ch.blocks[20].realtime_ns == static_cast<std::uint64_t>(kT0 + 33 * kBlockNs));
  CHECK(ch.blocks[20].missing_before == 3);
}

}  // TEST_SUITE

}  // namespace weir::test

// The receiver in this process against messages put on the mock cluster's topics by hand: zero-value
// gap carriers, a partition trimmed by the cluster's retention under a committed offset, and the lag
// while a far lossless reader holds the channel back.
#include <doctest/doctest.h>

#include <array>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "kafka_harness.hpp"
#include "kafka_producer.hpp"
#include "weir/kafka/codec.hpp"
#include "weir/kafka/receiver.hpp"

namespace weir::test {

namespace {

/// run_receiver on a thread of its own until finish().
class ReceiverThread {
 public:
  ReceiverThread(const core::Arena& arena, kafka::ReceiverOptions options) : options_(std::move(options)) {
    thread_ = std::thread([this, &arena] { result_.emplace(kafka::run_receiver(arena, options_, stop_)); });
  }
  ReceiverThread(const ReceiverThread&) = delete;
  ReceiverThread& operator=(const ReceiverThread&) = delete;
  ~ReceiverThread() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }
  kafka::ReceiverReport finish() {
    stop_.store(true);
    thread_.join();
    REQUIRE(result_.has_value());
    REQUIRE_MESSAGE(result_->has_value(), (result_->has_value() ? std::string() : result_->error().what));
    return **result_;
  }

 private:
  kafka::ReceiverOptions options_;
  std::atomic<bool> stop_{false};
  std::optional<core::Result<kafka::ReceiverReport>> result_;
  std::thread thread_;
};

kafka::ReceiverOptions options_for(const kafka::MockCluster& cluster, const std::string& topic, const std::string& name) {
  kafka::ReceiverOptions o;
  o.name = name;
  o.brokers = cluster.bootstraps();
  o.topic = topic;
  o.commit_every_ns = 200'000'000;
  return o;
}

/// se00 messages of one source, f32, `samples` samples each (sample i of counter c is c * 1000 + i).
class Se00Source {
 public:
  Se00Source(std::string name, std::uint32_t samples) : name_(std::move(name)), values_(samples) {}
  std::span<const std::byte> data(std::int64_t counter) {
    for (std::size_t i = 0; i < values_.size(); ++i) values_[i] = static_cast<float>(counter * 1000 + static_cast<std::int64_t>(i));
    return encode(counter, static_cast<std::uint32_t>(values_.size()));
  }
  std::span<const std::byte> carrier(std::int64_t counter) { return encode(counter, 0); }

 private:
  std::span<const std::byte> encode(std::int64_t counter, std::uint32_t samples) {
    kafka::SampleBlock b;
    b.name = name_;
    b.counter = counter;
    b.packet_timestamp_ns = 1'700'000'000'000'000'000 + counter * 1'000'000;
    b.time_delta_ns = 1000;  // 1 MHz
    b.dtype = core::Dtype::f32;
    b.samples = samples;
    b.values = std::as_bytes(std::span(values_.data(), samples));
    return encoder_.encode(b);
  }
  std::string name_;
  std::vector<float> values_;
  kafka::Se00Encoder encoder_;
};

constexpr auto kSinkOverflow = static_cast<std::size_t>(core::GapReason::sink_overflow);
constexpr auto kDroppedAtSource = static_cast<std::size_t>(core::GapReason::dropped_at_source);
constexpr auto kSourceLoss = static_cast<std::size_t>(core::GapReason::source_loss);

const kafka::ReceiverSourceReport& source_row(const kafka::ReceiverReport& r, const std::string& name) {
  for (const auto& s : r.sources)
    if (s.name == name) return s;
  FAIL("no row for source " << name);
  return r.sources.front();
}

}  // namespace

TEST_SUITE("kafka.receiver") {

TEST_CASE("a zero-value message whose weir.gaps covers its own counter publishes gap blocks only" * doctest::timeout(60)) {
  const std::string topic = "weir.carriers";
  kafka::MockCluster cluster = make_cluster(topic);
  ArenaGuard far_name(unique_name("kfar"));
  core::Arena far = make_arena(far_name.where());
  TestProducer producer(cluster.bootstraps());
  Se00Source adc0("adc0", 4), late0("late0", 4);
  producer.produce(topic, adc0.data(0));
  producer.produce(topic, adc0.data(1));
  producer.produce(topic, adc0.carrier(4), "2:3:sink_overflow");      // 2, 3, 4: carried
  producer.produce(topic, adc0.data(5));
  producer.produce(topic, adc0.data(5));                               // a duplicate: late
  producer.produce(topic, adc0.carrier(7), "6:2:dropped_at_source");  // 6, 7
  producer.produce(topic, adc0.data(8));
  producer.produce(topic, late0.carrier(10), "10:1:sink_overflow");   // before its channel exists: held
  producer.produce(topic, late0.data(11));
  producer.flush();
  kafka::ReceiverOptions o = options_for(cluster, topic, "in");
  o.routes = {{"adc0", ""}, {"late0", "held"}};
  ReceiverThread recv(far, o);
  REQUIRE(eventually([&] { return head_of(far, "adc0") == 9 && head_of(far, "held") == 2; }, kSettle));
  const kafka::ReceiverReport r = recv.finish();
  const ReadBack a = read_back(far, "adc0", 9);
  CHECK(a.data == 4);  // counters 0, 1, 5, 8
  CHECK(a.lost[kSinkOverflow] == 3);
  CHECK(a.lost[kDroppedAtSource] == 2);
  CHECK(a.total() == 9);
  const ReadBack h = read_back(far, "held", 2);
  CHECK(h.data == 1);
  CHECK(h.lost[kSinkOverflow] == 1);
  const kafka::ReceiverSourceReport& s = source_row(r, "adc0");
  CHECK(s.received == 4);
  CHECK(s.gaps == 5);
  CHECK(s.carriers == 2);
  CHECK(s.late == 1);
  CHECK(s.gaps_by_reason[kSourceLoss] == 0);
  const kafka::ReceiverSourceReport& l = source_row(r, "late0");
  CHECK(l.channel == "held");
  CHECK(l.received == 1);
  CHECK(l.gaps == 1);
  CHECK(l.carriers == 1);
  CHECK(r.received == 5);
  CHECK(r.other == 0);
  CHECK(r.malformed == 0);
  CHECK(r.offset_gaps == 0);
  // The data blocks are the messages' samples at their own places.
  auto copier = core::BlockCopier::open(far, "adc0");
  REQUIRE(copier);
  std::vector<std::byte> block(copier->block_bytes());
  for (const std::uint64_t seq : std::array<std::uint64_t, 4>{0, 1, 5, 8}) {
    core::BlockRecord rec;
    REQUIRE(copier->copy(seq, block, rec) == core::BlockStatus::ok);
    float first = 0;
    std::memcpy(&first, block.data(), sizeof first);
    CHECK(first == static_cast<float>(seq * 1000));
    CHECK(rec.samples == 4);
  }
}

TEST_CASE("a committed offset the cluster's retention passed counts offset gaps, and the counter gap follows" *
          doctest::timeout(90)) {
  const std::string topic = "weir.retention";
  kafka::MockCluster cluster = make_cluster(topic);
  ArenaGuard far_name(unique_name("kfar"));
  core::Arena far = make_arena(far_name.where());
  TestProducer producer(cluster.bootstraps());
  constexpr std::uint32_t kSamples = 16384;  // 64 KiB a message: 110 of them pass the mock's 5 MiB per partition
  Se00Source adc0("adc0", kSamples);
  for (std::int64_t c = 0; c < 10; ++c) producer.produce(topic, adc0.data(c));
  producer.flush();
  kafka::ReceiverOptions o = options_for(cluster, topic, "ret");
  o.channel = "adc0";
  o.ring_blocks = 16;
  {
    ReceiverThread first(far, o);
    REQUIRE(eventually([&] { return head_of(far, "adc0") == 10; }, kSettle));
    const kafka::ReceiverReport r = first.finish();  // commits offset 10 at stop
    CHECK(r.received == 10);
    CHECK(r.commits >= 1);
    CHECK(r.commit_errors == 0);
    REQUIRE(r.partition_offsets.size() == 1);
    CHECK(r.partition_offsets[0].next == 10);
  }
  for (std::int64_t c = 10; c < 110; ++c) producer.produce(topic, adc0.data(c));
  producer.flush();
  const auto [low, high] = producer.watermarks(topic);
  REQUIRE(high == 110);
  REQUIRE_MESSAGE(low > 10, "the mock cluster kept offsets from " << low);  // retention deleted offsets 10 .. low-1
  ReceiverThread second(far, o);
  REQUIRE(eventually([&] { return head_of(far, "adc0") == 110; }, kSettle));
  const kafka::ReceiverReport r = second.finish();
  REQUIRE(r.partition_offsets.size() == 1);
  const kafka::ReceiverPartitionReport& p = r.partition_offsets[0];
  CHECK(p.committed_at_start == 10);
  CHECK(p.first == low);
  CHECK(p.next == 110);
  CHECK(r.offset_gaps == static_cast<std::uint64_t>(low - 10));
  CHECK(r.received == static_cast<std::uint64_t>(110 - low));
  CHECK(r.gaps == static_cast<std::uint64_t>(low - 10));  // the counters the gone offsets held
  CHECK(r.gaps_by_reason[kSourceLoss] == r.gaps);
  CHECK(r.late == 0);
  CHECK(source_row(r, "adc0").resumed);
  CHECK(r.lag == 0);
}

TEST_CASE("lag is published while a far lossless reader holds the channel back, and each drop is a gap block" *
          doctest::timeout(60)) {
  const std::string topic = "weir.lag";
  kafka::MockCluster cluster = make_cluster(topic);
  ArenaGuard far_name(unique_name("kfar"));
  core::Arena far = make_arena(far_name.where());
  core::ChannelSpec spec;
  spec.name = "adc0";
  spec.rate_hz = 1e6;
  spec.samples_per_block = 4;
  spec.ring_blocks = 4;
  spec.wait_timeout_ns = 40'000'000;  // the writer waits this long for the stuck reader, then drops
  REQUIRE(core::create_channel(far, spec));
  std::optional<core::ChannelReader> stuck;
  {
    auto reader = core::ChannelReader::open(far, "adc0", core::ConsumerPolicy::lossless, "stuck", core::StartAt::oldest);
    REQUIRE(reader);
    stuck.emplace(std::move(*reader));
  }
  TestProducer producer(cluster.bootstraps());
  Se00Source adc0("adc0", 4);
  constexpr std::int64_t kMessages = 100;
  for (std::int64_t c = 0; c < kMessages; ++c) producer.produce(topic, adc0.data(c));
  producer.flush();
  kafka::ReceiverOptions o = options_for(cluster, topic, "lag");
  o.channel = "adc0";
  ReceiverThread recv(far, o);
  REQUIRE(eventually([&] { return key_u64(far, "kafka.lag.lag") >= 50; }, kSettle));
  stuck.reset();  // the reader goes: the rest flows
  REQUIRE(eventually([&] { return head_of(far, "adc0") == kMessages; }, kSettle));
  CHECK(eventually([&] { return key_u64(far, "kafka.lag.lag") == 0; }, kSettle));
  const kafka::ReceiverReport r = recv.finish();
  CHECK(r.dropped > 0);
  CHECK(r.received + r.dropped == kMessages);
  CHECK(r.gaps == r.dropped);
  CHECK(r.gaps_by_reason[kDroppedAtSource] == r.dropped);
  CHECK(r.late == 0);
  CHECK(r.lag == 0);
}

}  // TEST_SUITE

}  // namespace weir::test

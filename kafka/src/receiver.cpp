// The receiver: se00 messages of one source into one channel, every missing counter a gap.
#include "weir/kafka/receiver.hpp"

#include <chrono>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "weir/core/counter_keys.hpp"
#include "gap_header.hpp"
#include "rdkafka_handle.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/clock.hpp"
#include "weir/kafka/codec.hpp"

namespace weir::kafka {

namespace {

using core::Errc;
using core::fail;
using core::GapReason;
using core::Result;

constexpr int kPollMs = 100;                        // the loop looks at stop this often
constexpr std::int64_t kKeysEveryNs = 100'000'000;
constexpr int kMetadataMs = 2000;                   // one metadata request's wait
constexpr std::int64_t kMetadataRetryNs = 500'000'000;

class Receiver {
 public:
  Receiver(const core::Arena& arena, const ReceiverOptions& options, rd_kafka_t* rk)
      : arena_(arena), options_(options), rk_(rk),
        keys_(arena, "kafka." + options.name + "."),
        source_(options.source.empty() ? options.channel : options.source) {
    for (auto [index, field] : {std::pair{&k_received_, "received"}, {&k_gaps_, "gaps"}, {&k_late_, "late"},
                                {&k_dropped_, "dropped"}, {&k_refused_, "refused"}, {&k_other_, "other"},
                                {&k_malformed_, "malformed"}, {&k_errors_, "errors"}, {&k_bytes_, "bytes"},
                                {&k_partitions_, "partitions"}})
      *index = keys_.add(field);
    runs_.reserve(kMaxGapRuns);
  }

  Result<ReceiverReport> run(const std::atomic<bool>& stop) {
    const std::int64_t start = core::monotonic_ns();
    publish_keys();
    if (auto ok = assign(stop); !ok) return tl::make_unexpected(ok.error());
    std::int64_t next_keys = 0;
    while (!stop.load(std::memory_order_relaxed)) {  // a flag: nothing else is ordered by it
      if (rd_kafka_message_t* m = rd_kafka_consumer_poll(rk_, kPollMs)) {
        on_message(*m);
        rd_kafka_message_destroy(m);
      }
      if (const std::int64_t now = core::monotonic_ns(); now >= next_keys) {
        publish_keys();
        next_keys = now + kKeysEveryNs;
      }
    }
    publish_keys();
    ReceiverReport r = report_;
    r.elapsed_s = static_cast<double>(core::monotonic_ns() - start) / 1e9;
    return r;
  }

 private:
  // Every partition of the topic, from its beginning (or end); waits for the topic to exist.
  Result<void> assign(const std::atomic<bool>& stop) {
    const Topic topic(rd_kafka_topic_new(rk_, options_.topic.c_str(), nullptr));
    if (!topic) return fail(Errc::invalid_argument, fmt::format("kafka recv {}: topic '{}'", options_.name, options_.topic));
    bool said = false;
    while (!stop.load(std::memory_order_relaxed)) {
      const rd_kafka_metadata_t* md = nullptr;
      const rd_kafka_resp_err_t err = rd_kafka_metadata(rk_, 0, topic.get(), &md, kMetadataMs);
      int partitions = 0;
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR && md->topic_cnt == 1 && md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR)
        partitions = md->topics[0].partition_cnt;
      if (md != nullptr) rd_kafka_metadata_destroy(md);
      if (partitions > 0) {
        rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(partitions);
        for (int p = 0; p < partitions; ++p)
          rd_kafka_topic_partition_list_add(list, options_.topic.c_str(), p)->offset =
              options_.from_newest ? RD_KAFKA_OFFSET_END : RD_KAFKA_OFFSET_BEGINNING;
        const rd_kafka_resp_err_t assigned = rd_kafka_assign(rk_, list);
        rd_kafka_topic_partition_list_destroy(list);
        if (assigned != RD_KAFKA_RESP_ERR_NO_ERROR)
          return fail(Errc::io_error, fmt::format("kafka recv {}: assign '{}': {}", options_.name, options_.topic,
                                                  rd_kafka_err2str(assigned)));
        report_.partitions = partitions;
        return {};
      }
      if (!said)
        fmt::print(stderr, "weir kafka recv {}: waiting for topic '{}' at {} ({})\n", options_.name, options_.topic,
                   options_.brokers, rd_kafka_err2str(err));
      said = true;
      const std::int64_t until = core::monotonic_ns() + kMetadataRetryNs;
      while (core::monotonic_ns() < until && !stop.load(std::memory_order_relaxed))
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return {};
  }

  void on_message(const rd_kafka_message_t& m) {
    if (m.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      if (m.err != RD_KAFKA_RESP_ERR__PARTITION_EOF) ++report_.errors;
      return;
    }
    const std::span<const std::byte> payload(static_cast<const std::byte*>(m.payload), m.len);
    if (schema_id(payload) != kSe00) {
      ++report_.other;
      return;
    }
    auto block = decode_se00(payload);
    if (!block) {
      ++report_.malformed;
      return;
    }
    if (block->name != source_) {
      ++report_.other;
      return;
    }
    if (!writer_ && !attach(*block)) {
      ++report_.refused;
      return;
    }
    if (block->dtype != writer_->desc().dtype || block->samples > writer_->samples_per_block()) {
      ++report_.malformed;
      return;
    }
    const std::int64_t target = block->counter + offset_;
    const auto head = static_cast<std::int64_t>(writer_->next_sequence());
    if (target < head) {
      ++report_.late;
      return;
    }
    gap_runs(m);
    for (const GapRun& r : runs_) {  // the sender's word on the blocks it did not send
      const std::int64_t first = static_cast<std::int64_t>(r.first) + offset_;
      catch_up(first, GapReason::source_loss);
      catch_up(std::min(first + static_cast<std::int64_t>(r.count), target), r.reason);
    }
    catch_up(target, GapReason::source_loss);
    std::span<std::byte> out;
    if (writer_->claim(out) != core::ClaimStatus::ok) {
      ++report_.dropped;
      return;
    }
    if (!block->values.empty()) std::memcpy(out.data(), block->values.data(), block->values.size());
    writer_->publish(block->samples, static_cast<std::uint64_t>(block->packet_timestamp_ns), 0, 0);
    ++report_.received;
    report_.bytes += block->values.size();
  }

  void gap_runs(const rd_kafka_message_t& m) {
    runs_.clear();
    rd_kafka_headers_t* headers = nullptr;
    if (rd_kafka_message_headers(&m, &headers) != RD_KAFKA_RESP_ERR_NO_ERROR) return;
    const void* value = nullptr;
    std::size_t size = 0;
    if (rd_kafka_header_get_last(headers, kGapHeader, &value, &size) != RD_KAFKA_RESP_ERR_NO_ERROR || value == nullptr)
      return;
    if (!parse_runs(std::string_view(static_cast<const char*>(value), size), runs_)) ++report_.malformed;
  }

  // Far sequence `target` is next: everything before it not published becomes gap blocks.
  void catch_up(std::int64_t target, GapReason reason) noexcept {
    const auto head = static_cast<std::int64_t>(writer_->next_sequence());
    if (target <= head) return;
    const auto blocks = static_cast<std::uint64_t>(target - head);
    writer_->skip(blocks, reason);
    report_.gaps += blocks;
    report_.gaps_by_reason[static_cast<std::size_t>(reason)] += blocks;
  }

  // The channel for the first block: created from it, or attached if it matches. Said once if not.
  bool attach(const SampleBlock& block) {
    if (refused_) return false;
    refused_ = true;
    if (!core::find_channel(arena_, options_.channel)) {
      if (block.time_delta_ns <= 0) {
        refuse(fmt::format("source '{}' gives no time_delta, so no rate to create it with", source_));
        return false;
      }
      core::ChannelSpec spec;
      spec.name = options_.channel;
      spec.dtype = block.dtype;
      spec.rate_hz = 1e9 / block.time_delta_ns;
      spec.units = options_.units;
      spec.samples_per_block = options_.block_samples != 0 ? options_.block_samples : std::max(block.samples, 1U);
      spec.ring_blocks = options_.ring_blocks;
      if (auto made = core::create_channel(arena_, spec); made) {
        report_.created = true;
      } else if (!core::find_channel(arena_, options_.channel)) {
        refuse(made.error().what);
        return false;
      }
    }
    auto writer = core::ChannelWriter::open(arena_, options_.channel);
    if (!writer) {
      refuse(writer.error().what);
      return false;
    }
    if (writer->desc().dtype != block.dtype || writer->samples_per_block() < block.samples) {
      refuse(fmt::format("it is {} with {} samples per block; source '{}' sends {} blocks of {}",
                         core::dtype_name(writer->desc().dtype), writer->samples_per_block(), source_,
                         core::dtype_name(block.dtype), block.samples));
      return false;
    }
    offset_ = static_cast<std::int64_t>(writer->next_sequence()) - block.counter;
    writer_.emplace(std::move(*writer));
    refused_ = false;
    return true;
  }

  void refuse(const std::string& why) const {
    fmt::print(stderr, "weir kafka recv {}: refusing channel '{}': {}\n", options_.name, options_.channel, why);
  }

  void publish_keys() noexcept {
    keys_.set(k_received_, report_.received);
    keys_.set(k_gaps_, report_.gaps);
    keys_.set(k_late_, report_.late);
    keys_.set(k_dropped_, report_.dropped);
    keys_.set(k_refused_, report_.refused);
    keys_.set(k_other_, report_.other);
    keys_.set(k_malformed_, report_.malformed);
    keys_.set(k_errors_, report_.errors);
    keys_.set(k_bytes_, report_.bytes);
    keys_.set(k_partitions_, static_cast<std::uint64_t>(report_.partitions));
    keys_.publish(report_.partitions > 0 ? "assigned" : "waiting");
  }

  const core::Arena& arena_;
  const ReceiverOptions& options_;
  rd_kafka_t* rk_;
  core::CounterKeys keys_;
  std::string source_;
  std::size_t k_received_ = 0, k_gaps_ = 0, k_late_ = 0, k_dropped_ = 0, k_refused_ = 0, k_other_ = 0, k_malformed_ = 0,
              k_errors_ = 0, k_bytes_ = 0, k_partitions_ = 0;
  std::optional<core::ChannelWriter> writer_;
  bool refused_ = false;
  std::int64_t offset_ = 0;  // far sequence = message_counter + offset_
  std::vector<GapRun> runs_;
  ReceiverReport report_;
};

}  // namespace

Result<void> validate(const ReceiverOptions& o) {
  if (o.name.empty() || o.name.size() > 48)
    return fail(Errc::invalid_argument, fmt::format("kafka recv: name '{}': 1 to 48 bytes", o.name));
  if (o.brokers.empty()) return fail(Errc::invalid_argument, "kafka recv: no --brokers (HOST:PORT,...)");
  if (o.topic.empty()) return fail(Errc::invalid_argument, "kafka recv: no --topic");
  if (o.channel.empty()) return fail(Errc::invalid_argument, "kafka recv: no --channel");
  return {};
}

Result<ReceiverReport> run_receiver(const core::Arena& arena, const ReceiverOptions& options,
                                    const std::atomic<bool>& stop) {
  if (auto ok = validate(options); !ok) return tl::make_unexpected(ok.error());
  const std::string what = "kafka recv " + options.name;
  const Properties defaults{{"bootstrap.servers", options.brokers},
                            {"client.id", "weir-" + options.name},
                            {"group.id", options.group.empty() ? "weir-" + options.name : options.group},
                            {"enable.auto.commit", "false"},
                            {"enable.auto.offset.store", "false"},
                            {"enable.partition.eof", "false"}};
  auto conf = make_conf(defaults, options.properties, what);
  if (!conf) return tl::make_unexpected(conf.error());
  auto client = make_client(RD_KAFKA_CONSUMER, *conf, what);
  if (!client) return tl::make_unexpected(client.error());
  (void)rd_kafka_poll_set_consumer(client->get());
  Receiver receiver(arena, options, client->get());
  auto report = receiver.run(stop);
  (void)rd_kafka_consumer_close(client->get());
  return report;
}

}  // namespace weir::kafka

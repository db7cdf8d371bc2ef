// The run-control topic: one pl72 or 6s4t produced and confirmed; a reader from the topic's end.
#include "weir/kafka/run_control.hpp"

#include <chrono>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "rdkafka_handle.hpp"
#include "weir/core/clock.hpp"
#include "weir/kafka/codec.hpp"

namespace weir::kafka {

namespace {

using core::Errc;
using core::fail;
using core::Result;

constexpr int kRunPollMs = 50;
constexpr int kRunMetadataMs = 1000;  // one metadata request's wait
using core::kNsPerMs;

struct Delivery {
  bool done = false;
  rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
};

void on_run_delivery(rd_kafka_t* /*rk*/, const rd_kafka_message_t* m, void* /*opaque*/) {
  auto* d = static_cast<Delivery*>(m->_private);
  d->done = true;
  d->err = m->err;
}

double seconds(std::int64_t ns) { return static_cast<double>(ns) / 1e9; }

}  // namespace

Result<void> send_control(const ControlOptions& o, std::span<const std::byte> message, std::string_view key) {
  const std::string what = fmt::format("kafka run: brokers {} topic '{}'", o.brokers, o.topic);
  if (o.brokers.empty()) return fail(Errc::invalid_argument, "kafka run: no --brokers (HOST:PORT,...)");
  if (o.topic.empty()) return fail(Errc::invalid_argument, "kafka run: no --topic");
  const Properties defaults{{"bootstrap.servers", o.brokers},
                            {"client.id", "weir-" + (o.name.empty() ? std::string("run") : o.name)},
                            {"enable.idempotence", "true"},
                            {"acks", "all"},
                            {"message.timeout.ms", std::to_string(o.timeout_ns / kNsPerMs)}};
  Delivery delivery;  // before the client: its destruction may still report on the message
  auto conf = make_conf(defaults, o.properties, what);
  if (!conf) return tl::make_unexpected(conf.error());
  rd_kafka_conf_set_dr_msg_cb(*conf, &on_run_delivery);
  auto client = make_client(RD_KAFKA_PRODUCER, *conf, what);
  if (!client) return tl::make_unexpected(client.error());
  const Topic topic(rd_kafka_topic_new(client->get(), o.topic.c_str(), nullptr));
  if (!topic) return fail(Errc::invalid_argument, fmt::format("{}: {}", what, rd_kafka_err2str(rd_kafka_last_error())));
  if (rd_kafka_produce(topic.get(), RD_KAFKA_PARTITION_UA, RD_KAFKA_MSG_F_COPY, const_cast<std::byte*>(message.data()),
                       message.size(), key.data(), key.size(), &delivery) != 0)
    return fail(Errc::io_error, fmt::format("{}: {}", what, rd_kafka_err2str(rd_kafka_last_error())));
  const std::int64_t until = core::monotonic_ns() + o.timeout_ns;
  while (!delivery.done && core::monotonic_ns() < until) (void)rd_kafka_poll(client->get(), kRunPollMs);
  if (!delivery.done) {
    (void)rd_kafka_purge(client->get(), RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
    (void)rd_kafka_poll(client->get(), 0);  // the purged message's report, before `delivery` goes
    return fail(Errc::io_error, fmt::format("{}: not delivered within {:.1f} s (no broker answered?)", what,
                                           seconds(o.timeout_ns)));
  }
  if (delivery.err != RD_KAFKA_RESP_ERR_NO_ERROR)
    return fail(Errc::io_error, fmt::format("{}: not delivered: {}", what, rd_kafka_err2str(delivery.err)));
  return {};
}

struct ControlReader::Impl {
  Client client;
  std::uint64_t errors = 0;
  std::vector<std::byte> scratch;  // a misaligned payload copied here before it is decoded
};

ControlReader::ControlReader(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
ControlReader::ControlReader(ControlReader&&) noexcept = default;
ControlReader& ControlReader::operator=(ControlReader&&) noexcept = default;
ControlReader::~ControlReader() {
  if (impl_ && impl_->client) (void)rd_kafka_consumer_close(impl_->client.get());
}

Result<ControlReader> ControlReader::open(const ControlOptions& o, const std::atomic<bool>& stop) {
  const std::string what = fmt::format("control topic '{}' at {}", o.topic, o.brokers);
  if (o.brokers.empty()) return fail(Errc::invalid_argument, "no Kafka brokers (HOST:PORT,...)");
  if (o.topic.empty()) return fail(Errc::invalid_argument, "no control topic");
  const std::string name = o.name.empty() ? std::string("writer") : o.name;
  const Properties defaults{{"bootstrap.servers", o.brokers},
                            {"client.id", "weir-" + name},
                            {"group.id", "weir-" + name + "-control"},
                            {"enable.auto.commit", "false"},
                            {"enable.auto.offset.store", "false"},
                            {"enable.partition.eof", "false"}};
  auto conf = make_conf(defaults, o.properties, what);
  if (!conf) return tl::make_unexpected(conf.error());
  auto client = make_client(RD_KAFKA_CONSUMER, *conf, what);
  if (!client) return tl::make_unexpected(client.error());
  (void)rd_kafka_poll_set_consumer(client->get());
  const Topic topic(rd_kafka_topic_new(client->get(), o.topic.c_str(), nullptr));
  if (!topic) return fail(Errc::invalid_argument, fmt::format("{}: {}", what, rd_kafka_err2str(rd_kafka_last_error())));
  const std::int64_t until = core::monotonic_ns() + o.timeout_ns;
  rd_kafka_resp_err_t last = RD_KAFKA_RESP_ERR_NO_ERROR;
  while (!stop.load(std::memory_order_relaxed)) {
    const rd_kafka_metadata_t* md = nullptr;
    last = rd_kafka_metadata(client->get(), 0, topic.get(), &md, kRunMetadataMs);
    int partitions = 0;
    if (last == RD_KAFKA_RESP_ERR_NO_ERROR && md->topic_cnt == 1) {
      last = md->topics[0].err;
      if (last == RD_KAFKA_RESP_ERR_NO_ERROR) partitions = md->topics[0].partition_cnt;
    }
    if (md != nullptr) rd_kafka_metadata_destroy(md);
    if (partitions > 0) {
      rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(partitions);
      for (int p = 0; p < partitions; ++p) {
        std::int64_t low = 0, high = 0;
        const rd_kafka_resp_err_t q =
            rd_kafka_query_watermark_offsets(client->get(), o.topic.c_str(), p, &low, &high, kRunMetadataMs);
        rd_kafka_topic_partition_list_add(list, o.topic.c_str(), p)->offset =
            q == RD_KAFKA_RESP_ERR_NO_ERROR ? high : RD_KAFKA_OFFSET_END;
      }
      const rd_kafka_resp_err_t assigned = rd_kafka_assign(client->get(), list);
      rd_kafka_topic_partition_list_destroy(list);
      if (assigned != RD_KAFKA_RESP_ERR_NO_ERROR)
        return fail(Errc::io_error, fmt::format("{}: assign: {}", what, rd_kafka_err2str(assigned)));
      auto impl = std::make_unique<Impl>();
      impl->client = std::move(*client);
      return ControlReader(std::move(impl));
    }
    if (core::monotonic_ns() >= until)
      return fail(Errc::io_error, fmt::format("{}: no metadata within {:.1f} s ({}): no broker answered, or no such topic",
                                             what, seconds(o.timeout_ns), rd_kafka_err2str(last)));
    std::this_thread::sleep_for(std::chrono::milliseconds(kRunPollMs));
  }
  return fail(Errc::io_error, fmt::format("{}: stopped while waiting for it", what));
}

std::optional<ControlMessage> ControlReader::poll(int wait_ms) {
  rd_kafka_message_t* m = rd_kafka_consumer_poll(impl_->client.get(), wait_ms);
  if (m == nullptr) return std::nullopt;
  std::optional<ControlMessage> out;
  if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) ++impl_->errors;
  } else {
    const std::span<const std::byte> payload = aligned_payload(*m, impl_->scratch);
    ControlMessage c;
    const std::string_view id = schema_id(payload);
    if (id == kPl72) {
      if (auto s = decode_pl72(payload)) {
        c.kind = ControlMessage::Kind::start;
        c.start = std::move(*s);
      } else {
        c.kind = ControlMessage::Kind::malformed;
        c.error = s.error().what;
      }
    } else if (id == k6s4t) {
      if (auto s = decode_6s4t(payload)) {
        c.kind = ControlMessage::Kind::stop;
        c.stop = std::move(*s);
      } else {
        c.kind = ControlMessage::Kind::malformed;
        c.error = s.error().what;
      }
    } else {
      c.error = std::string(id);
    }
    out = std::move(c);
  }
  rd_kafka_message_destroy(m);
  return out;
}

std::uint64_t ControlReader::errors() const noexcept { return impl_->errors; }

}  // namespace weir::kafka

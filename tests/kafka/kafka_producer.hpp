#pragma once
// A plain librdkafka producer for tests that put messages on a topic themselves (gap carriers, a
// partition filled past the mock cluster's retention), and the low watermark of a partition.
#include <doctest/doctest.h>

#include <librdkafka/rdkafka.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>

namespace weir::test {

class TestProducer {
 public:
  explicit TestProducer(const std::string& brokers) {
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    std::array<char, 512> error{};
    REQUIRE(rd_kafka_conf_set(conf, "bootstrap.servers", brokers.c_str(), error.data(), error.size()) == RD_KAFKA_CONF_OK);
    REQUIRE(rd_kafka_conf_set(conf, "enable.idempotence", "true", error.data(), error.size()) == RD_KAFKA_CONF_OK);
    rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error.data(), error.size());
    REQUIRE_MESSAGE(rk_ != nullptr, error.data());
  }
  TestProducer(const TestProducer&) = delete;
  TestProducer& operator=(const TestProducer&) = delete;
  ~TestProducer() { rd_kafka_destroy(rk_); }

  /// Queues one message to partition 0, with a weir.gaps header when `gaps` is not empty.
  void produce(const std::string& topic, std::span<const std::byte> payload, const std::string& gaps = "") {
    rd_kafka_headers_t* headers = rd_kafka_headers_new(1);
    if (!gaps.empty()) REQUIRE(rd_kafka_header_add(headers, "weir.gaps", -1, gaps.data(), static_cast<ssize_t>(gaps.size())) == RD_KAFKA_RESP_ERR_NO_ERROR);
    // librdkafka's RD_KAFKA_V_* macros are C casts.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
    const rd_kafka_resp_err_t err =
        rd_kafka_producev(rk_, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(0),
                          RD_KAFKA_V_VALUE(const_cast<std::byte*>(payload.data()), payload.size()),
                          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_HEADERS(headers), RD_KAFKA_V_END);
#pragma GCC diagnostic pop
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) rd_kafka_headers_destroy(headers);  // taken only on success
    REQUIRE_MESSAGE(err == RD_KAFKA_RESP_ERR_NO_ERROR, rd_kafka_err2str(err));
    rd_kafka_poll(rk_, 0);
  }

  /// Waits (bounded) until every queued message is delivered.
  void flush() { REQUIRE(rd_kafka_flush(rk_, 20'000) == RD_KAFKA_RESP_ERR_NO_ERROR); }

  /// The partition's low and high watermarks, asked of its leader.
  std::pair<std::int64_t, std::int64_t> watermarks(const std::string& topic, int partition = 0) {
    std::int64_t low = -1, high = -1;
    REQUIRE(rd_kafka_query_watermark_offsets(rk_, topic.c_str(), partition, &low, &high, 10'000) ==
            RD_KAFKA_RESP_ERR_NO_ERROR);
    return {low, high};
  }

 private:
  rd_kafka_t* rk_ = nullptr;
};

}  // namespace weir::test

#pragma once
// A topic read back with a plain librdkafka consumer (no weir code between): every message of
// partition 0 from the beginning, with its key, value and headers, for checking what weir sent.
#include <doctest/doctest.h>

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace weir::test {

struct RawMessage {
  std::string key;
  std::vector<std::byte> value;
  std::map<std::string, std::string> headers;
  std::int64_t offset = 0;
  [[nodiscard]] std::optional<std::string> header(const std::string& name) const {
    const auto it = headers.find(name);
    return it == headers.end() ? std::nullopt : std::optional<std::string>(it->second);
  }
};

/// Reads partition 0 of `topic` from its first message until `count` messages arrived and no more
/// came for `quiet` (so a message too many is seen), or `timeout` passed.
inline std::vector<RawMessage> read_topic(const std::string& bootstraps, const std::string& topic, std::size_t count,
                                          std::chrono::milliseconds timeout,
                                          std::chrono::milliseconds quiet = std::chrono::milliseconds(500)) {
  char error[512] = {};
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  for (auto [k, v] : {std::pair{"bootstrap.servers", bootstraps.c_str()}, {"group.id", "weir-kafka-test"},
                      {"enable.auto.commit", "false"}})
    REQUIRE(rd_kafka_conf_set(conf, k, v, error, sizeof error) == RD_KAFKA_CONF_OK);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, error, sizeof error);
  REQUIRE_MESSAGE(rk != nullptr, error);
  rd_kafka_topic_partition_list_t* parts = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(parts, topic.c_str(), 0)->offset = RD_KAFKA_OFFSET_BEGINNING;
  REQUIRE(rd_kafka_assign(rk, parts) == RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_topic_partition_list_destroy(parts);
  std::vector<RawMessage> out;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto last = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() < deadline) {
    if (out.size() >= count && std::chrono::steady_clock::now() - last >= quiet) break;
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 50);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      RawMessage r;
      r.offset = m->offset;
      if (m->key != nullptr) r.key.assign(static_cast<const char*>(m->key), m->key_len);
      const auto* bytes = static_cast<const std::byte*>(m->payload);
      r.value.assign(bytes, bytes + m->len);
      rd_kafka_headers_t* headers = nullptr;
      if (rd_kafka_message_headers(m, &headers) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        const char* name = nullptr;
        const void* value = nullptr;
        std::size_t size = 0;
        for (std::size_t i = 0; rd_kafka_header_get_all(headers, i, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR; ++i)
          r.headers[name] = value != nullptr ? std::string(static_cast<const char*>(value), size) : std::string();
      }
      out.push_back(std::move(r));
      last = std::chrono::steady_clock::now();
    }
    rd_kafka_message_destroy(m);
  }
  (void)rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  return out;
}

}  // namespace weir::test

// The mock cluster: a librdkafka handle that owns rd_kafka_mock_cluster's brokers.
#include "weir/kafka/mock_cluster.hpp"

#include <string>

#include <fmt/format.h>

#include "rdkafka_handle.hpp"  // rdkafka.h, which rdkafka_mock.h needs first
#include <librdkafka/rdkafka_mock.h>

namespace weir::kafka {

using core::Errc;
using core::fail;

struct MockCluster::Impl {
  Client owner;  // destroyed after the cluster
  rd_kafka_mock_cluster_t* cluster = nullptr;
  ~Impl() {
    if (cluster != nullptr) rd_kafka_mock_cluster_destroy(cluster);
  }
};

MockCluster::MockCluster(std::unique_ptr<Impl> impl, int brokers, std::string bootstraps) noexcept
    : impl_(std::move(impl)), brokers_(brokers), bootstraps_(std::move(bootstraps)) {}
MockCluster::MockCluster(MockCluster&&) noexcept = default;
MockCluster::~MockCluster() = default;

core::Result<MockCluster> MockCluster::start(int brokers) {
  if (brokers < 1 || brokers > 16)
    return fail(Errc::invalid_argument, fmt::format("kafka mock: {} brokers; give 1 to 16", brokers));
  // The owner only hosts the cluster's thread: it never connects anywhere itself.
  auto conf = make_conf({{"log_level", "3"}}, {}, "kafka mock");
  if (!conf) return tl::make_unexpected(conf.error());
  auto owner = make_client(RD_KAFKA_PRODUCER, *conf, "kafka mock");
  if (!owner) return tl::make_unexpected(owner.error());
  auto impl = std::make_unique<Impl>();
  impl->owner = std::move(*owner);
  impl->cluster = rd_kafka_mock_cluster_new(impl->owner.get(), brokers);
  if (impl->cluster == nullptr)
    return fail(Errc::io_error, fmt::format("kafka mock: librdkafka could not start {} brokers", brokers));
  std::string bootstraps = rd_kafka_mock_cluster_bootstraps(impl->cluster);
  return MockCluster(std::move(impl), brokers, std::move(bootstraps));
}

core::Result<void> MockCluster::create_topic(std::string_view topic, int partitions, int replication) {
  const std::string name(topic);
  if (name.empty() || partitions < 1 || replication < 1 || replication > brokers_)
    return fail(Errc::invalid_argument, fmt::format("kafka mock: topic '{}' with {} partitions and replication {} "
                                                    "(1 to {} brokers)", name, partitions, replication, brokers_));
  if (const rd_kafka_resp_err_t err = rd_kafka_mock_topic_create(impl_->cluster, name.c_str(), partitions, replication);
      err != RD_KAFKA_RESP_ERR_NO_ERROR)
    return fail(Errc::io_error, fmt::format("kafka mock: create topic '{}': {}", name, rd_kafka_err2str(err)));
  return {};
}

core::Result<void> MockCluster::set_leader(std::string_view topic, int partition, int broker) {
  const std::string name(topic);
  if (const rd_kafka_resp_err_t err = rd_kafka_mock_partition_set_leader(impl_->cluster, name.c_str(), partition, broker);
      err != RD_KAFKA_RESP_ERR_NO_ERROR)
    return fail(Errc::invalid_argument, fmt::format("kafka mock: leader of '{}' [{}] to broker {}: {}", name, partition,
                                                    broker, rd_kafka_err2str(err)));
  return {};
}

core::Result<void> MockCluster::set_down(int broker) {
  if (broker < 1 || broker > brokers_)
    return fail(Errc::invalid_argument, fmt::format("kafka mock: no broker {} (1 to {})", broker, brokers_));
  if (const rd_kafka_resp_err_t err = rd_kafka_mock_broker_set_down(impl_->cluster, broker); err != RD_KAFKA_RESP_ERR_NO_ERROR)
    return fail(Errc::io_error, fmt::format("kafka mock: broker {} down: {}", broker, rd_kafka_err2str(err)));
  return {};
}

core::Result<void> MockCluster::set_up(int broker) {
  if (broker < 1 || broker > brokers_)
    return fail(Errc::invalid_argument, fmt::format("kafka mock: no broker {} (1 to {})", broker, brokers_));
  if (const rd_kafka_resp_err_t err = rd_kafka_mock_broker_set_up(impl_->cluster, broker); err != RD_KAFKA_RESP_ERR_NO_ERROR)
    return fail(Errc::io_error, fmt::format("kafka mock: broker {} up: {}", broker, rd_kafka_err2str(err)));
  return {};
}

}  // namespace weir::kafka

#pragma once
// librdkafka's built-in mock cluster (rdkafka_mock.h): real Kafka brokers speaking the protocol on
// loopback, in this process, for tests and for trying weir without a cluster (`weir kafka mock`).
// Brokers have ids 1 to N; a broker set down drops its connections and refuses new ones (its
// partitions keep it as leader: clients wait for it, as they would for a restarting broker).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "weir/core/error.hpp"

namespace weir::kafka {

class MockCluster {
 public:
  /// Starts `brokers` brokers (1 to 16) on 127.0.0.1, each on a port the kernel picks.
  [[nodiscard]] static core::Result<MockCluster> start(int brokers);
  MockCluster(MockCluster&&) noexcept;
  MockCluster& operator=(MockCluster&&) = delete;
  MockCluster(const MockCluster&) = delete;
  MockCluster& operator=(const MockCluster&) = delete;
  ~MockCluster();

  /// "127.0.0.1:PORT,127.0.0.1:PORT,...": what clients take as bootstrap.servers.
  [[nodiscard]] const std::string& bootstraps() const noexcept { return bootstraps_; }
  [[nodiscard]] int brokers() const noexcept { return brokers_; }

  /// Creates a topic (1 or more partitions, replication 1 to brokers()); fails naming it.
  [[nodiscard]] core::Result<void> create_topic(std::string_view topic, int partitions, int replication);
  /// Makes `broker` the leader of the topic's partition.
  [[nodiscard]] core::Result<void> set_leader(std::string_view topic, int partition, int broker);
  /// Takes a broker down (connections dropped, new ones refused) or brings it back.
  [[nodiscard]] core::Result<void> set_down(int broker);
  [[nodiscard]] core::Result<void> set_up(int broker);

 private:
  struct Impl;
  explicit MockCluster(std::unique_ptr<Impl> impl, int brokers, std::string bootstraps) noexcept;
  std::unique_ptr<Impl> impl_;
  int brokers_ = 0;
  std::string bootstraps_;
};

}  // namespace weir::kafka

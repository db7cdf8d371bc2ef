#pragma once
// The file-writer's Kafka side: receivers that publish the data topics' se00 sources into the
// staging arena, one channel per source, each missing message counter a gap block.
#include <atomic>
#include <thread>
#include <vector>

#include "kafka_file_writer.hpp"
#include "weir/core/arena.hpp"
#include "weir/kafka/receiver.hpp"

namespace weir::tools {

class StagingFeed {
 public:
  StagingFeed() = default;
  StagingFeed(const StagingFeed&) = delete;
  StagingFeed& operator=(const StagingFeed&) = delete;
  ~StagingFeed();

  /// Starts the receivers into `staging`: one per source and topic (the receiver takes one source
  /// into one channel). Fails naming the option a receiver refuses. Thread: one.
  [[nodiscard]] core::Result<void> start(const core::Arena& staging, const FileWriterOptions& options);
  /// Stops them and returns what each did (a receiver that failed: its error on stderr, no report).
  std::vector<kafka::ReceiverReport> stop();

 private:
  std::atomic<bool> stop_{false};
  std::vector<kafka::ReceiverOptions> options_;  // fixed before the threads start: they hold references
  std::vector<core::Result<kafka::ReceiverReport>> results_;
  std::vector<std::thread> threads_;
};

}  // namespace weir::tools

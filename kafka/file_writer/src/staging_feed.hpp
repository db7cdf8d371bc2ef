#pragma once
// The file-writer's Kafka side: receivers that publish the data topics' se00 sources into the
// staging arena, one channel per source, each missing message counter a gap block.
#include <atomic>
#include <thread>
#include <vector>

#include "weir/core/arena.hpp"
#include "weir/kafka/receiver.hpp"
#include "weir/kafka_file_writer/file_writer.hpp"

namespace weir::kafka::fw {

class StagingFeed {
 public:
  StagingFeed() = default;
  StagingFeed(const StagingFeed&) = delete;
  StagingFeed& operator=(const StagingFeed&) = delete;
  ~StagingFeed();

  /// Starts the receivers into `staging`: one per data topic, each taking every source into its
  /// channel. Fails naming the option a receiver refuses. `notice` (non-empty, callable from any
  /// thread) is kept for stop(). Thread: one.
  [[nodiscard]] core::Result<void> start(const core::Arena& staging, const FileWriterOptions& options,
                                         const Notice& notice);
  /// Stops them and returns what each did (a receiver that failed: its error as a notice, no report).
  std::vector<kafka::ReceiverReport> stop();

 private:
  std::atomic<bool> stop_{false};
  Notice notice_;
  std::vector<kafka::ReceiverOptions> options_;  // fixed before the threads start: they hold references
  std::vector<core::Result<kafka::ReceiverReport>> results_;
  std::vector<std::thread> threads_;
};

}  // namespace weir::kafka::fw

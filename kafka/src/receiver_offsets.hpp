#pragma once
// The receiver's partitions: assigned at their committed offsets, every offset consumed stored (only
// after what its message gave is published), commits on an interval and at stop, offset gaps and
// lag. Private to the kafka module.
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "rdkafka_handle.hpp"
#include "weir/kafka/receiver.hpp"

namespace weir::kafka {

class PartitionOffsets {
 public:
  PartitionOffsets(rd_kafka_t* rk, const ReceiverOptions& options);
  ~PartitionOffsets();
  PartitionOffsets(const PartitionOffsets&) = delete;
  PartitionOffsets& operator=(const PartitionOffsets&) = delete;

  /// Waits for the topic, reads the group's committed offsets (bounded) and assigns every partition
  /// there; a partition with none starts at its beginning (or end: from_newest). Returns with 0
  /// partitions when `stop` came first. Thread: the receiver's.
  [[nodiscard]] core::Result<void> assign(const std::atomic<bool>& stop);

  /// The message at `offset` of `partition` is done with (published, counted or skipped): a jump
  /// past the offset expected next is counted as offset gaps, and offset + 1 is what a commit gives.
  /// Returns the offsets skipped over. Hot path: no allocation.
  std::uint64_t consumed(std::int32_t partition, std::int64_t offset) noexcept;

  /// Commits what changed every commit_every_ns, takes commit results, and refreshes the lag about
  /// once a second from librdkafka's cached high watermarks (no request on this path). Thread: the
  /// receiver's.
  void tick(std::int64_t now_ns);

  /// At stop: commits what is left and waits for the results, at most commit_wait_ns.
  void finish();

  [[nodiscard]] int partitions() const noexcept { return static_cast<int>(parts_.size()); }
  [[nodiscard]] std::uint64_t offset_gaps() const noexcept { return offset_gaps_; }
  [[nodiscard]] std::uint64_t lag() const noexcept { return lag_; }
  [[nodiscard]] std::uint64_t commits() const noexcept { return commits_; }
  [[nodiscard]] std::uint64_t commit_errors() const noexcept { return commit_errors_; }
  [[nodiscard]] const std::vector<ReceiverPartitionReport>& report() const noexcept { return parts_; }

 private:
  void commit();
  void take_results(int timeout_ms);
  void refresh_lag();

  rd_kafka_t* rk_;
  const ReceiverOptions& options_;
  rd_kafka_queue_t* results_;                 // commit results come here
  std::vector<ReceiverPartitionReport> parts_;  // indexed by partition
  std::vector<std::int64_t> committed_;        // the last offset committed (or being committed)
  std::uint64_t offset_gaps_ = 0, lag_ = 0, commits_ = 0, commit_errors_ = 0;
  int in_flight_ = 0;                          // commits without a result yet
  std::int64_t next_commit_ns_ = 0, next_lag_ns_ = 0;
};

}  // namespace weir::kafka

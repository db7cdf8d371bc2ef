// The receiver's partitions: committed offsets, offset gaps, commits, lag.
#include "receiver_offsets.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "weir/core/clock.hpp"

namespace weir::kafka {

namespace {

using core::Errc;
using core::fail;

constexpr int kMetadataMs = 2000;                     // one metadata request's wait
constexpr std::int64_t kMetadataRetryNs = 500'000'000;
constexpr int kCommittedMs = 5000;                    // reading the group's committed offsets at start
constexpr std::int64_t kLagEveryNs = 1'000'000'000;
constexpr int kResultPollMs = 100;                    // at stop, the wait for commit results is cut in these

struct ListDeleter {
  void operator()(rd_kafka_topic_partition_list_t* list) const noexcept { rd_kafka_topic_partition_list_destroy(list); }
};
using PartitionList = std::unique_ptr<rd_kafka_topic_partition_list_t, ListDeleter>;

// The topic's partition count; 0 while it is not there yet.
int partition_count(rd_kafka_t* rk, rd_kafka_topic_t* topic, rd_kafka_resp_err_t& err) {
  const rd_kafka_metadata_t* md = nullptr;
  err = rd_kafka_metadata(rk, 0, topic, &md, kMetadataMs);
  int partitions = 0;
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR && md->topic_cnt == 1 && md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR)
    partitions = md->topics[0].partition_cnt;
  if (md != nullptr) rd_kafka_metadata_destroy(md);
  return partitions;
}

}  // namespace

PartitionOffsets::PartitionOffsets(rd_kafka_t* rk, const ReceiverOptions& options)
    : rk_(rk), options_(options), results_(rd_kafka_queue_new(rk)) {}

PartitionOffsets::~PartitionOffsets() { rd_kafka_queue_destroy(results_); }

core::Result<void> PartitionOffsets::assign(const std::atomic<bool>& stop) {
  const Topic topic(rd_kafka_topic_new(rk_, options_.topic.c_str(), nullptr));
  if (!topic) return fail(Errc::invalid_argument, fmt::format("kafka recv {}: topic '{}'", options_.name, options_.topic));
  bool said = false;
  int count = 0;
  while (!stop.load(std::memory_order_relaxed)) {  // a flag: nothing else is ordered by it
    rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
    count = partition_count(rk_, topic.get(), err);
    if (count > 0) break;
    if (!said)
      fmt::print(stderr, "weir kafka recv {}: waiting for topic '{}' at {} ({})\n", options_.name, options_.topic,
                 options_.brokers, rd_kafka_err2str(err));
    said = true;
    const std::int64_t until = core::monotonic_ns() + kMetadataRetryNs;
    while (core::monotonic_ns() < until && !stop.load(std::memory_order_relaxed))
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (count == 0) return {};
  const PartitionList list(rd_kafka_topic_partition_list_new(count));
  for (int p = 0; p < count; ++p) rd_kafka_topic_partition_list_add(list.get(), options_.topic.c_str(), p);
  // Where the group stopped. When the coordinator cannot say in time, librdkafka looks it up itself
  // (OFFSET_STORED): the run resumes all the same, but offset gaps at the start go uncounted.
  const rd_kafka_resp_err_t read = rd_kafka_committed(rk_, list.get(), kCommittedMs);
  if (read != RD_KAFKA_RESP_ERR_NO_ERROR)
    fmt::print(stderr, "weir kafka recv {}: the group's committed offsets not read ({}); librdkafka resumes from "
                       "them itself\n", options_.name, rd_kafka_err2str(read));
  parts_.assign(static_cast<std::size_t>(count), ReceiverPartitionReport{});
  committed_.assign(static_cast<std::size_t>(count), -1);
  for (int i = 0; i < list->cnt; ++i) {
    rd_kafka_topic_partition_t& e = list->elems[i];
    ReceiverPartitionReport& part = parts_[static_cast<std::size_t>(e.partition)];
    part.partition = e.partition;
    if (read != RD_KAFKA_RESP_ERR_NO_ERROR) {
      e.offset = RD_KAFKA_OFFSET_STORED;
    } else if (e.err == RD_KAFKA_RESP_ERR_NO_ERROR && e.offset >= 0) {
      part.committed_at_start = e.offset;  // below the low watermark: auto.offset.reset, counted as offset gaps
      committed_[static_cast<std::size_t>(e.partition)] = e.offset;
    } else {
      e.offset = options_.from_newest ? RD_KAFKA_OFFSET_END : RD_KAFKA_OFFSET_BEGINNING;
    }
  }
  if (const rd_kafka_resp_err_t assigned = rd_kafka_assign(rk_, list.get()); assigned != RD_KAFKA_RESP_ERR_NO_ERROR)
    return fail(Errc::io_error, fmt::format("kafka recv {}: assign '{}': {}", options_.name, options_.topic,
                                            rd_kafka_err2str(assigned)));
  return {};
}

std::uint64_t PartitionOffsets::consumed(std::int32_t partition, std::int64_t offset) noexcept {
  if (partition < 0 || static_cast<std::size_t>(partition) >= parts_.size() || offset < 0) return 0;
  ReceiverPartitionReport& p = parts_[static_cast<std::size_t>(partition)];
  const std::int64_t expected = p.next >= 0 ? p.next : p.committed_at_start;
  const std::uint64_t skipped = expected >= 0 && offset > expected ? static_cast<std::uint64_t>(offset - expected) : 0;
  if (p.first < 0) p.first = offset;
  p.next = offset + 1;
  p.offset_gaps += skipped;
  offset_gaps_ += skipped;
  return skipped;
}

void PartitionOffsets::tick(std::int64_t now_ns) {
  take_results(0);
  if (now_ns >= next_commit_ns_) {
    commit();
    next_commit_ns_ = now_ns + options_.commit_every_ns;
  }
  if (now_ns >= next_lag_ns_) {
    refresh_lag();
    next_lag_ns_ = now_ns + kLagEveryNs;
  }
}

void PartitionOffsets::finish() {
  commit();
  const std::int64_t deadline = core::monotonic_ns() + options_.commit_wait_ns;
  while (in_flight_ > 0) {
    const std::int64_t left_ms = (deadline - core::monotonic_ns()) / 1'000'000;
    if (left_ms <= 0) break;
    take_results(static_cast<int>(std::min<std::int64_t>(left_ms, kResultPollMs)));
  }
  if (in_flight_ > 0)
    fmt::print(stderr, "weir kafka recv {}: {} offset commit(s) unanswered after {} ms; a restart re-reads what "
                       "they covered (counted late)\n", options_.name, in_flight_, options_.commit_wait_ns / 1'000'000);
  refresh_lag();
}

void PartitionOffsets::commit() {
  PartitionList list;
  for (std::size_t p = 0; p < parts_.size(); ++p) {
    if (parts_[p].next < 0 || parts_[p].next == committed_[p]) continue;
    if (!list) list.reset(rd_kafka_topic_partition_list_new(static_cast<int>(parts_.size())));
    rd_kafka_topic_partition_list_add(list.get(), options_.topic.c_str(), static_cast<std::int32_t>(p))->offset =
        parts_[p].next;
    committed_[p] = parts_[p].next;
  }
  if (!list) return;
  if (rd_kafka_commit_queue(rk_, list.get(), results_, nullptr, nullptr) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    ++commit_errors_;
    std::fill(committed_.begin(), committed_.end(), -1);  // the next commit tries them again
    return;
  }
  ++in_flight_;
}

void PartitionOffsets::take_results(int timeout_ms) {
  while (in_flight_ > 0) {
    rd_kafka_event_t* ev = rd_kafka_queue_poll(results_, timeout_ms);
    if (ev == nullptr) return;
    if (rd_kafka_event_type(ev) == RD_KAFKA_EVENT_OFFSET_COMMIT) {
      --in_flight_;
      bool failed = rd_kafka_event_error(ev) != RD_KAFKA_RESP_ERR_NO_ERROR;
      if (const rd_kafka_topic_partition_list_t* done = rd_kafka_event_topic_partition_list(ev))
        for (int i = 0; i < done->cnt; ++i) failed = failed || done->elems[i].err != RD_KAFKA_RESP_ERR_NO_ERROR;
      if (failed) {
        ++commit_errors_;
        std::fill(committed_.begin(), committed_.end(), -1);
      } else {
        ++commits_;
      }
    }
    rd_kafka_event_destroy(ev);
  }
}

void PartitionOffsets::refresh_lag() {
  std::uint64_t lag = 0;
  for (const ReceiverPartitionReport& p : parts_) {
    std::int64_t low = 0, high = 0;
    if (rd_kafka_get_watermark_offsets(rk_, options_.topic.c_str(), p.partition, &low, &high) !=
            RD_KAFKA_RESP_ERR_NO_ERROR || high < 0)
      continue;
    const std::int64_t at = p.next >= 0 ? p.next : p.committed_at_start >= 0 ? p.committed_at_start : low;
    if (at >= 0 && high > at) lag += static_cast<std::uint64_t>(high - at);
  }
  lag_ = lag;
}

}  // namespace weir::kafka

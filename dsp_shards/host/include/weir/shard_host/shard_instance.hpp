#pragma once
// One running shard: a configured weir_shard on one input channel, registered as a consumer of it,
// writing its declared outputs. The host process runs one per matching input channel.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/error.hpp"
#include "weir/shard.h"
#include "weir/shard_host/latency_histogram.hpp"
#include "weir/shard_host/loader.hpp"
#include "weir/shard_host/params.hpp"
#include "weir/shard_host/watchdog.hpp"

namespace weir::shard_host {

class OutputSet;

struct InstanceSpec {
  std::string instance;     // consumer name in the arena, handed to the shard as cfg->instance
  std::string input;        // input channel
  std::string output_base;  // prefix of the outputs; empty: the input's name
  core::ConsumerPolicy policy = core::ConsumerPolicy::lossy;
  core::StartAt start = core::StartAt::newest;
  std::uint64_t start_sequence = 0;  // with StartAt::sequence
};

/// What one instance did, for the summary. blocks_in are valid blocks handed to process(); lost
/// counts blocks the writer lapped and blocks torn while process() read them.
struct InstanceReport {
  std::string instance, kind, input;
  core::ConsumerPolicy policy = core::ConsumerPolicy::lossy;
  std::vector<std::string> outputs;  // channel and key names, in declared order
  std::uint64_t blocks_in = 0, blocks_out = 0, blocks_lost = 0, blocks_skipped = 0, errors = 0;
  std::uint64_t p50_ns = 0, p99_ns = 0;  // process() time over the whole run
};

/// Thread: one processing thread calls poll(); create and finish are cold, same thread.
class ShardInstance {
 public:
  /// Configures the shard for the input channel: refuses an input dtype the shard does not accept
  /// (naming the dtype, the channel and what it accepts), reports a configure() refusal with the
  /// shard's own text, creates or opens each declared output (output channels it becomes the
  /// writer of; keys resolved to handles, refusing one larger than the arena's value slots), then
  /// registers as a consumer named spec.instance of kind "shard:<kind>". On failure nothing stays
  /// registered and the shard has been stopped. Requires: `shard`, `params` and `arena` outlive it.
  [[nodiscard]] static core::Result<std::unique_ptr<ShardInstance>> create(const core::Arena& arena,
                                                                           const LoadedShard& shard,
                                                                           const ResolvedParams& params,
                                                                           const InstanceSpec& spec);
  ShardInstance(const ShardInstance&) = delete;
  ShardInstance& operator=(const ShardInstance&) = delete;
  ~ShardInstance();

  /// Handles up to max_blocks input blocks: next, process in place, validate, done; counts outputs,
  /// errors, skips and process() time in the consumer row. Returns the blocks (or gaps) it handled;
  /// fewer than max_blocks means the input is drained, and then the shard's idle (if any) runs once
  /// after the blocks it was handed. Hot path: no allocation, lock, log or throw.
  /// `who` is this instance's index in the watchdog's parties.
  std::uint32_t poll(std::uint32_t max_blocks, Watchdog& dog, std::uint32_t who) noexcept;

  /// Lets the shard flush its partial results (the table's flush, if any) into the outputs, then
  /// stops it, releases the reader and every output writer, and reports. Idempotent: a
  /// second call returns the same figures.
  InstanceReport finish();

  [[nodiscard]] const InstanceReport& info() const noexcept { return report_; }
  [[nodiscard]] std::uint32_t input_index() const noexcept { return reader_->channel_index(); }
  /// One input block's span at the channel's nominal rate; 0 when the rate is not known.
  [[nodiscard]] std::int64_t block_period_ns() const noexcept { return block_period_ns_; }
  /// The input ring's span at the channel's nominal rate; 0 when the rate is not known.
  [[nodiscard]] std::int64_t ring_span_ns() const noexcept { return block_period_ns_ * ring_blocks_; }

 private:
  ShardInstance(const weir_shard_api& api, std::string what, InstanceReport info);
  void publish_stats(std::int64_t now_ns) noexcept;
  void store_counters() noexcept;
  void run_idle() noexcept;

  const weir_shard_api* api_;
  std::string what_;
  weir_shard* shard_ = nullptr;
  std::unique_ptr<OutputSet> outputs_;
  std::optional<core::ChannelReader> reader_;
  InstanceReport report_;
  std::uint64_t expected_seq_ = 0;  // the block after the last one handled: a bigger one was skipped
  std::uint64_t out_ = 0, skipped_ = 0, errors_ = 0;
  std::uint32_t since_stats_ = 0;
  std::int64_t stats_ns_ = 0;
  std::int64_t block_period_ns_ = 0;
  std::int64_t ring_blocks_ = 0;
  LatencyHistogram recent_;  // p50/p99 in the consumer row
  LatencyHistogram total_;   // p50/p99 of the summary
  bool finished_ = false;
  bool after_gap_ = false;      // input went missing since the last block handed to process
  bool processed_any_ = false;  // a block was handed to process
  bool idle_called_ = false;    // the shard's idle ran since the last block handed to process
  bool prev_torn_ = false;      // the last block handed to process was torn; not yet told to the shard
  bool v3_ = false;             // the shard speaks ABI version 3 (WEIR_SHARD_PREV_TORN, idle)
};

}  // namespace weir::shard_host

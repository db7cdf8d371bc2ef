#pragma once
// `weir kafka recv`: reads a Kafka topic (every partition) and publishes its se00 messages as blocks
// of channels of this arena, one channel per source (a route), and its f144 messages as arena keys.
// A channel is created from its source's first message (dtype from the array type, rate from
// time_delta, block size from its samples or block_samples) or attached when it exists and matches
// (same dtype, blocks no larger than its own). docs/design/kafka.md has the whole design.
//
// Gap accounting from the message counters: far block = message_counter + offset, the offset fixed
// once per channel (by the first message the channel ever took, kept in the arena key
// kafka.NAME.SOURCE.offset so a restarted receiver continues the same mapping). Every counter that
// does not arrive becomes gap blocks (ChannelWriter::skip): for the reason a sender's "weir.gaps"
// header gives (sink_overflow, the near writer's own reasons), else source_loss. A counter at or
// below one already published is a duplicate or a straggler: counted late, dropped. An se00 message
// with zero values whose weir.gaps header covers its own counter is a gap carrier: its runs become
// gap blocks and nothing else. Messages of no route and other schemas are counted (other), skipped.
//
// Offsets: the consumer group (weir-NAME unless group is set) holds the position. An offset is
// stored only after what its message gave is published, committed every commit_every_ns and at
// stop (a bounded wait); a restart resumes there. A jump of a partition's offsets (messages gone:
// retention, a deleted range, a committed offset below the low watermark) is counted offset_gaps.
#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "weir/core/arena.hpp"
#include "weir/core/arena_layout.hpp"
#include "weir/core/error.hpp"
#include "weir/core/limits.hpp"
#include "weir/core/gap_reason.hpp"
#include "weir/kafka/client_options.hpp"

namespace weir::kafka {

inline constexpr std::int64_t kDefaultCommitEveryNs = 1'000'000'000;  // offsets committed this often
inline constexpr std::int64_t kDefaultCommitWaitNs = 5'000'000'000;   // at stop: longest wait for the commit

/// One se00 source into one channel.
struct Route {
  std::string source;
  std::string channel;  // empty: the source's name
};

struct ReceiverOptions {
  std::string name;           // keys kafka.NAME.*, the consumer group weir-NAME unless group is set
  std::string brokers;        // bootstrap.servers
  std::string topic;
  std::string channel;        // the channel of this arena the blocks go into (when routes is empty)
  std::string source;         // the se00 source name to take; the channel's name when empty
  std::vector<Route> routes;  // each se00 source into its channel (replaces source/channel when non-empty)
  bool all_sources = false;   // every se00 source on the topic into a channel of its own name
  std::vector<std::string> keys;  // f144 sources matching these globs (fnmatch) -> arena keys of the same name
  std::string group;          // group.id; weir-NAME when empty
  std::uint32_t block_samples = 0;                  // a created channel's block; 0: the first message's samples
  std::uint32_t ring_blocks = core::kDefaultRingBlocks;
  std::string units;          // a created channel's units
  bool from_newest = false;   // a partition with no committed offset starts at its end, not its beginning
  std::int64_t commit_every_ns = kDefaultCommitEveryNs;
  std::int64_t commit_wait_ns = kDefaultCommitWaitNs;
  Properties properties;      // librdkafka properties over weir's defaults
};

/// One source's figures.
struct ReceiverSourceReport {
  std::string name;     // the se00 source
  std::string channel;  // the channel it goes into
  std::uint64_t received = 0;  // blocks published with data
  std::uint64_t gaps = 0;      // gap blocks published (missing counters, carriers' runs)
  std::uint64_t late = 0;      // messages whose counter was already published: dropped
  std::uint64_t dropped = 0;   // blocks the channel's writer could not claim (a far lossless reader full)
  std::uint64_t carriers = 0;  // zero-value gap carriers taken
  std::uint64_t refused = 0;   // messages for a channel that could not be made or does not match
  std::uint64_t bytes = 0;     // sample bytes published
  std::array<std::uint64_t, core::kGapReasonCount> gaps_by_reason{};
  bool created = false;        // this run made the channel
  bool resumed = false;        // the counter mapping came from kafka.NAME.SOURCE.offset
};

/// One partition's offsets.
struct ReceiverPartitionReport {
  int partition = 0;
  std::int64_t committed_at_start = -1;  // the group's committed offset when this run began; -1: none
  std::int64_t first = -1;               // the first offset this run read; -1: none
  std::int64_t next = -1;                // the offset after the last one read (what is committed at stop)
  std::uint64_t offset_gaps = 0;         // offsets skipped over: messages that were gone
};

struct ReceiverReport {
  // Totals over every source (see ReceiverSourceReport), and what was not a source's:
  std::uint64_t received = 0, gaps = 0, late = 0, dropped = 0, refused = 0, carriers = 0;
  std::uint64_t other = 0;      // messages of no route, of other schemas, or f144 of no --keys glob
  std::uint64_t malformed = 0;  // messages that do not decode, or a bad weir.gaps header
  std::uint64_t errors = 0;     // consumer errors
  std::uint64_t bytes = 0;      // sample bytes published
  std::uint64_t offset_gaps = 0;
  std::uint64_t keys_i64 = 0, keys_u64 = 0, keys_f64 = 0, keys_array = 0;  // f144 values set as keys, by kind
  std::uint64_t keys_failed = 0;  // f144 values the arena did not take (full, too large)
  std::uint64_t commits = 0, commit_errors = 0;
  std::uint64_t lag = 0;          // messages behind the high watermarks at the last look
  std::array<std::uint64_t, core::kGapReasonCount> gaps_by_reason{};
  bool created = false;  // this run made a channel
  int partitions = 0;
  double elapsed_s = 0;
  std::vector<ReceiverSourceReport> sources;
  std::vector<ReceiverPartitionReport> partition_offsets;
};

/// Checks options without touching the network: a name, brokers, a topic, and at least one of
/// channel, routes, all_sources, keys; route channels are valid channel names. Thread: any.
[[nodiscard]] core::Result<void> validate(const ReceiverOptions& options);

/// Runs until `stop` is set, then commits (waiting at most commit_wait_ns). Fails before receiving
/// for bad options or properties; afterwards broker trouble, bad messages and a refused channel are
/// counted, never fatal. Thread: one; `stop` from any.
[[nodiscard]] core::Result<ReceiverReport> run_receiver(const core::Arena& arena, const ReceiverOptions& options,
                                                        const std::atomic<bool>& stop);

}  // namespace weir::kafka

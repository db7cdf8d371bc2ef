#pragma once
// `weir kafka recv`: reads the se00 messages of one source from a Kafka topic (every partition) and
// publishes them as blocks of one channel of this arena, created from the first message (dtype
// from the array type, rate from time_delta, block size from its samples or block_samples) or
// attached when it exists and matches (same dtype, blocks no larger than its own).
//
// Gap accounting from the message counters: far block = message_counter + offset, the offset fixed
// by the first message this run reads (the channel continues after what it holds). Every counter
// that does not arrive becomes gap blocks (ChannelWriter::skip): for the reason a sender's
// "weir.gaps" header gives (sink_overflow, the near writer's own reasons), else source_loss. A
// counter at or below one already published is a duplicate or a straggler: counted late, dropped.
// Messages of other sources or other schemas on the topic are counted (other) and skipped.
//
// Arena keys kafka.NAME.*: received, gaps, late, dropped (the channel's writer dropped: a far
// lossless reader full), refused, other, malformed, errors (consumer errors), bytes, partitions.
#include <array>
#include <atomic>
#include <cstdint>
#include <string>

#include "weir/core/arena.hpp"
#include "weir/core/arena_layout.hpp"
#include "weir/core/error.hpp"
#include "weir/core/limits.hpp"
#include "weir/core/gap_reason.hpp"
#include "weir/kafka/client_options.hpp"

namespace weir::kafka {

struct ReceiverOptions {
  std::string name;           // keys kafka.NAME.*, the consumer group weir-NAME unless group is set
  std::string brokers;        // bootstrap.servers
  std::string topic;
  std::string channel;        // the channel of this arena the blocks go into
  std::string source;         // the se00 source name to take; the channel's name when empty
  std::string group;          // group.id; weir-NAME when empty (offsets are not committed)
  std::uint32_t block_samples = 0;                  // a created channel's block; 0: the first message's samples
  std::uint32_t ring_blocks = core::kDefaultRingBlocks;
  std::string units;          // a created channel's units
  bool from_newest = false;   // start at the end of each partition instead of the beginning
  Properties properties;      // librdkafka properties over weir's defaults
};

struct ReceiverReport {
  std::uint64_t received = 0, gaps = 0, late = 0, dropped = 0, refused = 0, other = 0, malformed = 0, errors = 0;
  std::uint64_t bytes = 0;
  std::array<std::uint64_t, core::kGapReasonCount> gaps_by_reason{};
  bool created = false;  // this run made the channel
  int partitions = 0;
  double elapsed_s = 0;
};

/// Checks options without touching the network. Thread: any.
[[nodiscard]] core::Result<void> validate(const ReceiverOptions& options);

/// Runs until `stop` is set. Fails before receiving for bad options or properties; afterwards
/// broker trouble, bad messages and a refused channel are counted, never fatal.
/// Thread: one; `stop` from any.
[[nodiscard]] core::Result<ReceiverReport> run_receiver(const core::Arena& arena, const ReceiverOptions& options,
                                                        const std::atomic<bool>& stop);

}  // namespace weir::kafka

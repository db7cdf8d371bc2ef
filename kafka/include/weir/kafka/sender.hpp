#pragma once
// `weir kafka send`: follows channels (and keys) of an arena and produces them to a Kafka topic in
// the ESS schemas (codec.hpp, codec_frames.hpp), each channel in the schema that fits it: an event
// channel's blocks as ev44, the frames of a channel with an axis (spectra, histograms) as hs01, one
// message a frame with the block's sequence in the header "weir.seq" = "SEQUENCE:FRAME:FRAMES", any
// other channel's blocks as se00 (SenderOptions::schemas overrides the choice). A channel's messages
// are keyed by its name (so they share a partition and keep their order), every change of a key
// matching the key patterns as one f144 message keyed by the key's name, and an x5f2 heartbeat on
// the status topic, if one is given.
//
// The producer is idempotent with acks=all (librdkafka retries without duplicates or reordering)
// and counts every delivery report. Back-pressure is explicit:
//   lossless (the default)  the sender reads as a lossless consumer, so the arena's writer waits for
//                           it; while librdkafka's queue is full it waits, up to lossless_wait_ns per
//                           block (counted: waits, wait_ns), then drops the block
//   lossy                   a block the queue cannot take now is dropped at once
// A dropped block is a gap of reason sink_overflow. Blocks a channel's writer published as gaps
// (ChannelWriter::skip) are not sent; blocks the sender could not read in time (lapped, or
// overwritten while copied) are counted lost. Every such run rides on the channel's next message
// in the header "weir.gaps" (gap_header.hpp), so a receiver records each run with its reason;
// facility tools ignore the header and see the jump of message_counter. A run still pending when the
// sender stops, or for gap_carrier_ns with nothing sent, goes in a gap carrier: a message of the
// channel's schema with no values (se00: none; hs01: shape [0]; ev44: no pulse, no event) whose
// counter is the run's last sequence and whose "weir.gaps" covers the run up to and including it.
//
// Arena keys kafka.NAME.*: sent (accepted by librdkafka), delivered, failed (delivery reports that
// gave up), dropped (sink_overflow), gaps (the writer's gap blocks passed on), lost, waits, wait_ns,
// bytes, keys_sent, keys_skipped (a type f144 cannot carry), status_sent, channels, in_queue, carriers
// (gap carriers sent), events_dropped (ev44: events whose time offset or id does not fit an int32),
// frames_cut (hs01: frames of a block refused after its first frame went).
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "weir/core/arena.hpp"
#include "weir/core/error.hpp"
#include "weir/kafka/client_options.hpp"

namespace weir::kafka {

inline constexpr std::int64_t kDefaultLosslessWaitNs = 10'000'000'000;  // lossless: wait per block, then drop
inline constexpr int kDefaultQueueMessages = 10'000;                    // librdkafka's queue, in messages
inline constexpr std::int64_t kDefaultStatusEveryNs = 2'000'000'000;
inline constexpr std::int64_t kDefaultFlushNs = 10'000'000'000;          // at stop: wait for the queue this long
inline constexpr std::int64_t kDefaultGapCarrierNs = 1'000'000'000;      // a gap run pending this long goes alone

/// A channel name or glob and the schema its channels go as: "se00", "hs01" or "ev44".
struct SchemaChoice {
  std::string pattern;
  std::string schema;
};

struct SenderOptions {
  std::string name;                   // keys kafka.NAME.*, the x5f2 service_id, the consumer rows' name
  std::string brokers;                // bootstrap.servers: HOST:PORT,...
  std::string topic;                  // se00 and f144 messages
  std::vector<std::string> channels;  // channel names or globs (fnmatch); "*" when empty
  std::vector<std::string> keys;      // key names or globs sent as f144; none when empty
  std::string status_topic;           // x5f2 heartbeats; none when empty
  std::int64_t status_every_ns = kDefaultStatusEveryNs;
  bool lossy = false;
  std::int64_t lossless_wait_ns = kDefaultLosslessWaitNs;
  int queue_messages = kDefaultQueueMessages;
  std::int64_t flush_ns = kDefaultFlushNs;
  bool from_newest = false;           // start at each channel's newest block instead of the oldest held
  std::vector<SchemaChoice> schemas;  // the first match picks a channel's schema; else by its kind
  std::int64_t gap_carrier_ns = kDefaultGapCarrierNs;
  Properties properties;              // librdkafka properties over weir's defaults
};

struct SenderChannelReport {
  std::string name;
  std::string schema;  // se00, hs01 or ev44
  std::uint64_t sent = 0, delivered = 0, failed = 0, dropped = 0, gaps = 0, lost = 0, bytes = 0;  // sent: messages
  std::uint64_t carriers = 0, events_dropped = 0, frames_cut = 0;
};

struct SenderReport {
  std::uint64_t sent = 0, delivered = 0, failed = 0, dropped = 0, gaps = 0, lost = 0, bytes = 0;
  std::uint64_t waits = 0, wait_ns = 0;
  std::uint64_t keys_sent = 0, keys_skipped = 0, status_sent = 0;
  std::uint64_t carriers = 0, events_dropped = 0, frames_cut = 0;
  std::uint64_t unflushed = 0;  // still in librdkafka's queue when the flush at stop gave up
  double elapsed_s = 0;
  std::vector<SenderChannelReport> channels;
};

/// Checks options without touching the network. Thread: any.
[[nodiscard]] core::Result<void> validate(const SenderOptions& options);

/// Runs until `stop` is set, then flushes (bounded by flush_ns) and reports. Fails before sending
/// for bad options or properties; afterwards broker trouble is counted, never fatal.
/// Thread: one; `stop` from any.
[[nodiscard]] core::Result<SenderReport> run_sender(const core::Arena& arena, const SenderOptions& options,
                                                    const std::atomic<bool>& stop);

}  // namespace weir::kafka

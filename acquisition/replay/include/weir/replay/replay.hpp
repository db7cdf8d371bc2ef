#pragma once
// The replay driver: plays a recording back into an arena's channels, so offline analysis runs the
// same shards as the live system. Each block is published with its recorded samples, flags and
// realtime stamp, on the recorded timing (scaled) or as fast as the consumers allow; the
// recording's gaps are published as gaps, so readers count exactly the recorded losses.
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/error.hpp"
#include "weir/replay/recording.hpp"

namespace weir::acq {

inline constexpr std::uint64_t kReplayReadBytes = 4ULL << 20;   // samples read from a file per HDF5 call
inline constexpr std::int64_t kReplayStopPollNs = 100'000'000;  // a paced wait looks at the stop flag this often

struct ReplayOptions {
  double speed = 1.0;                 // recorded time / replay time; 0: as fast as consumers allow ("max")
  std::vector<std::string> channels;  // shell patterns (fnmatch) of channels to replay; empty: all
  std::vector<std::string> keys;      // shell patterns of logged keys to replay; empty: none
  bool loop = false;                  // start over at the end, until stop (or max_loops)
  std::uint64_t max_loops = 0;        // with loop: stop after this many passes (0: until stop)
  std::uint64_t read_bytes = kReplayReadBytes;
  // Used only for channels this replay creates:
  std::uint32_t ring_blocks = core::kDefaultRingBlocks;
  core::FullPolicy full_policy = core::FullPolicy::wait;
  std::int64_t wait_timeout_ns = core::kDefaultWriterWaitNs;
  // Before the first block: wait until each replayed channel has this many live lossless consumers
  // (of kind `wait_kind` when not empty, "record:hdf5" for recorders), at most wait_consumers_ns; a
  // replay at full speed then cannot outrun a recorder that registers as the channel appears.
  std::uint32_t wait_consumers = 0;
  std::string wait_kind;
  std::int64_t wait_consumers_ns = 30'000'000'000;
};

struct ReplayChannelReport {
  std::string name;
  bool created = false;  // this replay created it (else it attached to an existing one)
  std::uint64_t blocks_published = 0;
  std::uint64_t samples_published = 0;
  std::uint64_t blocks_dropped = 0;  // a lossless reader stayed full past the channel's timeout: dropped at source
  std::uint64_t gaps = 0;            // recorded gaps replayed
  std::uint64_t blocks_missing = 0;  // blocks those gaps covered (published as gaps, or flagged)
  std::uint64_t gap_row_blocks = 0;  // what the recording's gap rows account for, per pass
  std::uint64_t recorded_drops = 0;  // blocks dropped at the source while recorded: never numbered, not replayed
};

struct ReplayReport {
  std::vector<ReplayChannelReport> channels;
  std::vector<std::string> files;
  std::uint64_t blocks_published = 0;
  std::uint64_t samples_published = 0;
  std::uint64_t blocks_dropped = 0;
  std::uint64_t blocks_missing = 0;
  std::vector<std::string> keys;  // the logged keys replayed (options.keys matched)
  std::uint64_t keys_written = 0;  // logged values written to the arena's keys
  std::uint64_t keys_failed = 0;   // values the arena refused (a value too large, no free slot, ...)
  std::string key_failure;         // the first refusal: key and status
  std::uint64_t loops = 0;  // passes completed
  double speed = 0;         // as asked; 0 for max
  double recorded_s = 0;    // one pass of the recording, by its monotonic stamps
  double elapsed_s = 0;
  std::int64_t max_lateness_ns = 0;  // paced: the latest a block was published after its deadline
  bool stopped = false;              // ended by the stop flag
};

/// Replays `recording` into `arena`. First checks every selected channel that exists in the arena,
/// refusing (before creating anything) one whose dtype or block size differs, naming both; then
/// creates the missing ones (dtype, rate, units, labels, block size as recorded; ring and full
/// policy from the options) and becomes the writer of each (failing if a live process writes one).
/// Blocks are published in recorded order across channels: paced, block b is published at
/// start + (m_b + d_b - m_0) / speed on CLOCK_MONOTONIC, where m is the recorded monotonic stamp
/// and d the block's duration (the moment its last sample was digitised), stamped with the recorded
/// realtime_ns and the replay's own monotonic time of its first sample; with speed 0 as fast as the
/// channels' lossless consumers let the writer go. A block a lossless consumer keeps out past the
/// channel's timeout is dropped at the source and counted. The blocks the recording lost (the
/// jumps in its sequence numbers, and gap rows before the first or after the last block) are
/// published where they were lost with ChannelWriter::skip, so every reader counts exactly them as
/// lost blocks; blocks recorded as dropped at the source never had sequence numbers and are only
/// reported (recorded_drops). A looped pass shifts realtime stamps by
/// one recorded span per pass. With options.keys, the key logs (h5::read_keys) of the matching keys
/// are replayed too: each logged value is written to the arena's key when its recorded realtime,
/// taken from the realtime of the channels' first block, comes due on the same clock (values logged
/// before that block at once, before any block), f64 numbers as f64, text as text, arrays with
/// their element dtype and shape (KvStore::set_array); a value the arena refuses is counted and
/// the replay goes on. Fails, before anything is created, when no logged key matches the patterns
/// given. Returns the first cold-path failure (a channel, a file read).
/// Thread: any one thread; `stop` may be set from any thread or a signal handler.
[[nodiscard]] core::Result<ReplayReport> run_replay(const core::Arena& arena, const Recording& recording,
                                                    const ReplayOptions& options, const std::atomic<bool>& stop);

}  // namespace weir::acq

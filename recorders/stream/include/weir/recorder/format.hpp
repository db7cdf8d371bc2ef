#pragma once
// The recorder's tunables, declared once. The file format's names and fixed values are not the
// recorder's: weir/h5/recording_format.hpp declares them (docs/design/recording.md).
#include <cstdint>

namespace weir::rec {

inline constexpr std::uint32_t kDefaultFlushMs = 1000;          // --flush-ms unless given
inline constexpr std::uint64_t kTargetChunkBytes = 256 * 1024;  // data chunk: whole blocks, about this many bytes
inline constexpr std::uint64_t kMaxChunkBytes = 1024 * 1024;    // never more blocks per chunk than fit in this
inline constexpr std::uint32_t kTableChunkRows = 1024;          // rows per chunk of the per-block tables
inline constexpr std::uint64_t kTableRowBytes = 4 * sizeof(std::uint64_t) + 2 * sizeof(std::uint32_t);  // a block's six table rows
inline constexpr std::uint32_t kGapChunkRows = 64;              // rows per chunk of a gaps table
inline constexpr std::uint32_t kKeyChunkRows = 256;             // rows per chunk of a key's NXlog
// How often a PV log's NXlogs hand over their partial chunks (the PV log channel itself: every flush).
// Between, a flush writes only their full chunks: under SWMR, HDF5's flush walks every dirty object
// in dependency order, a cost that grows with the square of the datasets a flush touches (2,000 PVs,
// 20,000 datasets: seconds a flush), and a PV at 10 Hz fills a chunk every kPvLogChunkRows / 10 s.
inline constexpr std::int64_t kPvLogPartialEveryNs = 30'000'000'000;
inline constexpr std::uint32_t kClockChunkRows = 16;            // rows per chunk of the clock offsets and steps tables
inline constexpr std::uint32_t kBlocksPerTurn = 64;             // blocks read from one channel before the next
inline constexpr std::int64_t kWaitSliceNs = 50'000'000;        // longest sleep: stop and rotate requests are seen this fast
inline constexpr std::int64_t kDiscoverEveryNs = 200'000'000;   // looks for new matching channels and keys this often
inline constexpr std::uint64_t kCloseReserveBytes = 256 * 1024;  // free disk kept for metadata to close a file cleanly
inline constexpr std::uint64_t kHeldChunks = 4;                 // chunks of a new dataset HDF5 holds in memory under SWMR until a flush
inline constexpr std::uint32_t kMaxKeyWatches = 16;             // keys subscribed for wake-ups; more are sampled on other wakes
inline constexpr double kHandoffTimeoutS = 600;                 // on_close: a hand-off command running longer is killed
inline constexpr double kHandoffRetryS = 1;                     // on_close: the first retry after a failure (doubling)
inline constexpr double kHandoffRetryMaxS = 300;                // on_close: the longest back-off between tries
inline constexpr std::int64_t kHandoffPollMs = 10;              // on_close: how often a running command is looked at
inline constexpr std::int64_t kRetentionPeriodMs = 200;         // keep: how often the disk and the files are looked at
inline constexpr double kHandoffStopWaitS = 10;                 // at a stop: hand-offs due get this long, then wait for the next start

/// Samples per chunk of a channel's data: whole blocks, about kTargetChunkBytes; a block bigger
/// than that is cut into chunks of kTargetChunkBytes. Thread: any.
[[nodiscard]] constexpr std::uint64_t data_chunk_samples(std::uint32_t samples_per_block,
                                                         std::uint32_t sample_bytes) noexcept {
  const std::uint64_t block_bytes = std::uint64_t{samples_per_block} * sample_bytes;
  if (block_bytes == 0) return 1;
  if (block_bytes <= kTargetChunkBytes) return (kTargetChunkBytes / block_bytes) * samples_per_block;
  return kTargetChunkBytes / sample_bytes;
}

}  // namespace weir::rec

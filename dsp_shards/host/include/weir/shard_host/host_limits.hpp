#pragma once
// Every tunable of the shard host, one line of comment each (the arena's own live in
// weir/core/limits.hpp).
#include <cstdint>

namespace weir::shard_host {

inline constexpr double kDefaultWatchdogS = 10.0;              // process() may run this long on one block before the host aborts
inline constexpr std::int64_t kWaitSliceNs = 50'000'000;       // longest sleep on the input's group: stop flags are seen this often
inline constexpr std::int64_t kDefaultBatchNs = 20'000'000;     // while blocks stream in, sleep this long between turns rather than wake per block (0: per block)
inline constexpr std::uint32_t kBatchRingShare = 4;            // ...and never longer than a 1/4 of the input ring's span at its nominal rate
inline constexpr std::uint32_t kBlocksPerTurn = 64;            // blocks one instance handles before the next instance gets a turn
inline constexpr std::uint32_t kDrainTurnsAtStop = 256;       // at stop, blocks already published are handled for at most this many turns before the shards flush
inline constexpr std::uint32_t kStatsEveryBlocks = 64;         // p50/p99 are written to the consumer row this often...
inline constexpr std::int64_t kStatsEveryNs = 100'000'000;     // ...or this often when blocks arrive slowly
inline constexpr std::uint64_t kStatsWindowBlocks = 4096;      // the "recent" p50/p99 window; then it starts afresh
inline constexpr std::int64_t kKeyWriteWaitNs = 200'000;       // a key output held by another writer is retried this long
inline constexpr std::int64_t kWatchdogMaxPollNs = 100'000'000;  // the watchdog looks at least this often
inline constexpr std::int64_t kWatchdogMinPollNs = 1'000'000;    // and at most this often
inline constexpr std::uint32_t kDefaultOutputRingBlocks = 64;  // block slots of an output channel the host creates
inline constexpr std::uint32_t kSuggestMaxDistance = 3;        // did-you-mean: edit distance still worth suggesting

}  // namespace weir::shard_host

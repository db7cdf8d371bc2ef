#pragma once
// The shard benchmark behind `weir bench shards`: runs one shard through the shard host's public API
// (load_shard, resolve_params, ShardInstance::poll woken by a Watcher, exactly as `weir shard` does) on an arena channel for a fixed number of blocks,
// in this process, and reports throughput and per-block process() latency.
//
// Feeding: a writer thread publishes `blocks` blocks into the input channel as fast as it can; the
// host registers as a *lossless* consumer, so the writer waits when the ring is full and no block is
// lost (a lost block would make the figure meaningless and is reported). The writer fills each ring
// slot once (a ramp) and afterwards only claims and publishes, so the figure is the host's and the
// shard's cost, not the cost of generating samples.
#include <cstdint>
#include <string>
#include <vector>

#include "weir/core/arena.hpp"
#include "weir/core/arena_layout.hpp"
#include "weir/core/error.hpp"
#include "weir/shard_host/params.hpp"

namespace weir::bench {

struct ShardBenchOptions {
  std::string shard = "null";         // built-in kind or .so path
  std::vector<shard_host::ParamArg> params;
  std::string channel = "bench.shard.in";  // input channel; created if missing (else it must match)
  core::Dtype dtype = core::Dtype::f32;
  std::uint32_t samples_per_block = 1024;
  std::uint32_t ring_blocks = 256;
  double rate_hz = 1e6;               // the channel's nominal rate (shards may plan from it)
  std::uint64_t blocks = 100'000;     // blocks to run through the shard
  double timeout_s = 120;             // give up (and fail) after this long
  bool prefill = false;               // publish every block before the clock starts (needs ring_blocks >=
                                      // blocks): the host's and shard's cost alone, on one core
};

struct ShardBenchResult {
  std::uint64_t blocks = 0;           // processed
  std::uint64_t lost = 0;             // should be 0: the consumer is lossless
  std::uint64_t errors = 0;           // process() < 0 or failed output writes
  double elapsed_s = 0;               // first publish to last block processed
  double cpu_s = 0;                   // this thread's CPU time over the same span (prefill: the host's loop alone)
  double blocks_per_s = 0;
  double samples_per_s = 0;
  std::uint64_t p50_ns = 0, p99_ns = 0;  // process() time per block
};

/// Runs the benchmark. Fails naming the shard or the channel for a load, parameter, configure or
/// channel problem, or when the blocks do not get through within timeout_s. Leaves the channel and
/// any output channels in the arena. Thread: the caller processes; one writer thread is started
/// and joined.
[[nodiscard]] core::Result<ShardBenchResult> bench_shard(const core::Arena& arena, const ShardBenchOptions& options);

}  // namespace weir::bench

// bench_shard: a writer thread feeds a lossless channel; this thread runs the shard through the same
// ShardInstance::poll the host uses, woken by the same Watcher.
#include "weir/bench/shard_bench.hpp"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <thread>

#include "weir/core/channel.hpp"
#include "weir/core/clock.hpp"
#include "weir/core/signals.hpp"
#include "weir/shard_host/host_limits.hpp"
#include "weir/shard_host/loader.hpp"
#include "weir/shard_host/shard_instance.hpp"
#include "weir/shard_host/watchdog.hpp"

namespace weir::bench {

namespace {

using core::Errc;
using core::fail;
using shard_host::InstanceReport;
using shard_host::InstanceSpec;
using shard_host::kBlocksPerTurn;
using shard_host::kWaitSliceNs;
using shard_host::load_shard;
using shard_host::resolve_params;
using shard_host::ShardInstance;
using shard_host::Watchdog;

constexpr double kNsPerS = 1e9;
constexpr std::int64_t kWriterWaitNs = 10'000'000'000;  // the bench's writer waits this long for the host

// Fills a block with a ramp in the channel's dtype (bytes of a ramp for the wide and complex ones:
// only the host's cost is measured, so any finite pattern will do).
void fill_ramp(std::span<std::byte> block, core::Dtype dtype, std::uint64_t seed) {
  if (dtype == core::Dtype::f32) {
    const std::size_t n = block.size() / sizeof(float);
    for (std::size_t i = 0; i < n; ++i) {
      const auto v = static_cast<float>((seed + i) % 1024) / 1024.0F;
      std::memcpy(block.data() + i * sizeof(float), &v, sizeof v);
    }
    return;
  }
  for (std::size_t i = 0; i < block.size(); ++i) block[i] = static_cast<std::byte>((seed + i) & 0x3F);
}

core::Result<void> ensure_channel(const core::Arena& arena, const ShardBenchOptions& o) {
  if (core::find_channel(arena, o.channel)) {
    for (const core::ChannelInfo& c : core::list_channels(arena))
      if (c.name == o.channel && (c.dtype != o.dtype || c.samples_per_block != o.samples_per_block))
        return fail(Errc::invalid_argument, "bench channel '" + o.channel + "' exists with another dtype or block size");
    return {};
  }
  core::ChannelSpec spec;
  spec.name = o.channel;
  spec.dtype = o.dtype;
  spec.rate_hz = o.rate_hz;
  spec.samples_per_block = o.samples_per_block;
  spec.ring_blocks = o.ring_blocks;
  spec.wait_timeout_ns = kWriterWaitNs;
  auto created = core::create_channel(arena, spec);
  if (!created) return tl::make_unexpected(created.error());
  return {};
}

// The calling thread's CPU time so far (user + system).
std::int64_t thread_cpu_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

core::Result<ShardBenchResult> bench_shard(const core::Arena& arena, const ShardBenchOptions& options) {
  if (options.blocks == 0) return fail(Errc::invalid_argument, "bench: blocks must be at least 1");
  if (options.prefill && options.blocks > options.ring_blocks)
    return fail(Errc::invalid_argument, "bench: a prefilled run needs a ring of at least its blocks");
  if (auto ok = ensure_channel(arena, options); !ok) return tl::make_unexpected(ok.error());
  auto shard = load_shard(options.shard);
  if (!shard) return tl::make_unexpected(shard.error());
  auto params = resolve_params(shard->api(), shard->what(), options.params);
  if (!params) return tl::make_unexpected(params.error());
  auto watcher = core::Watcher::create(arena);
  if (!watcher) return tl::make_unexpected(watcher.error());
  if (auto group = watcher->subscribe_channel(options.channel); !group) return tl::make_unexpected(group.error());
  auto writer = core::ChannelWriter::open(arena, options.channel);
  if (!writer) return tl::make_unexpected(writer.error());

  InstanceSpec spec;
  spec.instance = "bench." + std::string(shard->kind());
  spec.input = options.channel;
  spec.policy = core::ConsumerPolicy::lossless;
  spec.start = core::StartAt::sequence;  // exactly the blocks this run publishes
  spec.start_sequence = writer->next_sequence();
  auto instance = ShardInstance::create(arena, *shard, **params, spec);
  if (!instance) return tl::make_unexpected(instance.error());

  std::atomic<bool> give_up{false};
  std::atomic<std::uint64_t> dropped{0};
  const auto feed = [&] {
    const std::uint32_t ring = options.ring_blocks;
    for (std::uint64_t b = 0; b < options.blocks && !give_up.load(std::memory_order_relaxed); ++b) {
      std::span<std::byte> block;
      if (writer->claim(block) != core::ClaimStatus::ok) {
        dropped.fetch_add(1, std::memory_order_relaxed);  // only a count for the report
        continue;
      }
      if (b < ring) fill_ramp(block, options.dtype, b);  // each slot once; later blocks reuse the samples
      writer->publish(options.samples_per_block);
    }
  };
  if (options.prefill) feed();
  const std::int64_t begin = core::monotonic_ns();
  const std::int64_t begin_cpu = thread_cpu_ns();
  std::thread feeder(options.prefill ? std::function<void()>([] {}) : std::function<void()>(feed));

  const std::int64_t deadline = begin + std::llround(options.timeout_s * kNsPerS);
  Watchdog off(0, {});
  ShardBenchResult result;
  std::uint64_t handled = 0;
  while (handled + dropped.load(std::memory_order_relaxed) < options.blocks && core::monotonic_ns() < deadline) {
    const std::uint32_t n = (*instance)->poll(kBlocksPerTurn, off, 0);
    handled += n;
    if (n < kBlocksPerTurn) (void)watcher->wait(kWaitSliceNs);
  }
  const std::int64_t finished = core::monotonic_ns();
  const std::int64_t cpu_ns = thread_cpu_ns() - begin_cpu;
  give_up.store(true, std::memory_order_relaxed);
  feeder.join();
  const InstanceReport r = (*instance)->finish();
  if (handled + dropped.load() < options.blocks)
    return fail(Errc::io_error, "bench " + shard->what() + ": only " + std::to_string(handled) + " of " +
                                    std::to_string(options.blocks) + " blocks went through in " +
                                    std::to_string(options.timeout_s) + " s");
  result.blocks = r.blocks_in;
  result.lost = r.blocks_lost + dropped.load();
  result.errors = r.errors;
  result.elapsed_s = static_cast<double>(finished - begin) / kNsPerS;
  result.cpu_s = static_cast<double>(cpu_ns) / kNsPerS;
  result.blocks_per_s = result.elapsed_s > 0 ? static_cast<double>(result.blocks) / result.elapsed_s : 0;
  result.samples_per_s = result.blocks_per_s * options.samples_per_block;
  result.p50_ns = r.p50_ns;
  result.p99_ns = r.p99_ns;
  return result;
}

}  // namespace weir::bench

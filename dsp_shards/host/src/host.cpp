// run_host: load, resolve, configure, then one loop that sleeps on the inputs' signal groups and
// gives each instance a turn of up to kBlocksPerTurn blocks.
#include "weir/shard_host/host.hpp"

#include <algorithm>
#include <cmath>

#include "weir/core/clock.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/signals.hpp"
#include "weir/shard_host/input_match.hpp"
#include "weir/shard_host/loader.hpp"
#include "weir/shard_host/watchdog.hpp"

namespace weir::shard_host {

namespace {

using core::Errc;
using core::fail;

constexpr double kNsPerS = 1e9;

std::int64_t seconds_to_ns(double s) { return std::llround(s * kNsPerS); }

// The sleep between turns while blocks stream in: options.batch_ns, capped at a share of the
// shortest input ring's span; 0 (a wake per block) when that would not gather two blocks of the
// fastest input, when a rate is unknown, or for the `latest` policy, which wants the newest block.
std::int64_t batch_sleep_ns(const HostOptions& options, const std::vector<std::unique_ptr<ShardInstance>>& instances) {
  if (options.batch_ns <= 0 || options.policy == core::ConsumerPolicy::latest) return 0;
  std::int64_t sleep = options.batch_ns;
  std::int64_t fastest = 0;
  for (const auto& i : instances) {
    if (i->block_period_ns() <= 0) return 0;
    sleep = std::min(sleep, i->ring_span_ns() / kBatchRingShare);
    fastest = fastest == 0 ? i->block_period_ns() : std::min(fastest, i->block_period_ns());
  }
  return sleep >= 2 * fastest ? sleep : 0;
}

}  // namespace

core::Result<HostReport> run_host(const core::Arena& arena, const HostOptions& options, const std::atomic<bool>& stop) {
  if (!std::isfinite(options.duration_s) || options.duration_s < 0)
    return fail(Errc::invalid_argument, "--duration must be a non-negative number of seconds");
  if (!std::isfinite(options.watchdog_s) || options.watchdog_s < 0)
    return fail(Errc::invalid_argument, "--watchdog must be a non-negative number of seconds (0: off)");
  if (options.batch_ns < 0) return fail(Errc::invalid_argument, "--batch-ms must be a non-negative number of milliseconds (0: off)");
  auto shard = load_shard(options.shard);
  if (!shard) return tl::make_unexpected(shard.error());
  auto params = resolve_params(shard->api(), shard->what(), options.params);
  if (!params) return tl::make_unexpected(params.error());
  auto match = match_input(arena, options.input);
  if (!match) return tl::make_unexpected(core::with_context(match.error(), shard->what()));
  const bool several = match->channels.size() > 1;
  if (several && !options.output_base.empty())
    return fail(Errc::invalid_argument, shard->what() + ": label '" + options.input + "' matches " +
                                            std::to_string(match->channels.size()) +
                                            " channels; leave out --output so each instance writes under its input's "
                                            "name");

  auto watcher = core::Watcher::create(arena);
  if (!watcher) return tl::make_unexpected(core::with_context(watcher.error(), shard->what() + ": cannot wait for blocks"));
  HostReport report;
  report.shard = shard->what();
  report.kind = std::string(shard->kind());
  report.by_label = match->by_label;
  std::vector<std::unique_ptr<ShardInstance>> instances;
  std::vector<Watchdog::Party> parties;
  for (const std::string& channel : match->channels) {
    if (auto group = watcher->subscribe_channel(channel); !group)
      return tl::make_unexpected(core::with_context(group.error(), shard->what() + ": cannot wait for '" + channel + "'"));
    InstanceSpec spec;
    spec.input = channel;
    spec.output_base = options.output_base;
    spec.policy = options.policy;
    if (options.instance.empty()) {
      spec.instance = report.kind + "." + channel;
    } else {
      spec.instance = match->by_label ? options.instance + "." + channel : options.instance;
    }
    auto instance = ShardInstance::create(arena, *shard, **params, spec);
    if (!instance) return tl::make_unexpected(instance.error());  // earlier instances stop as they go
    parties.push_back({shard->what(), spec.instance, channel});
    instances.push_back(std::move(*instance));
  }
  if (options.on_started) {
    std::vector<InstanceReport> started;
    for (const auto& i : instances) started.push_back(i->info());
    options.on_started(started);
  }

  const std::int64_t begin = core::monotonic_ns();
  const std::int64_t end = options.duration_s > 0 ? begin + seconds_to_ns(options.duration_s) : 0;
  report.batch_sleep_ns = batch_sleep_ns(options, instances);
  {
    Watchdog dog(seconds_to_ns(options.watchdog_s), std::move(parties));
    const auto count = static_cast<std::uint32_t>(instances.size());
    while (!stop.load(std::memory_order_relaxed)) {  // a flag: nothing is ordered by it
      bool busy = false;
      std::uint32_t handled = 0;
      for (std::uint32_t i = 0; i < count; ++i) {
        const std::uint32_t n = instances[i]->poll(kBlocksPerTurn, dog, i);
        busy = n == kBlocksPerTurn || busy;
        handled += n;
      }
      const std::int64_t now = core::monotonic_ns();
      if (end != 0 && now >= end) break;
      if (busy) continue;
      ++report.wakes;
      const std::int64_t slice = end != 0 ? std::min(kWaitSliceNs, end - now) : kWaitSliceNs;
      if (report.batch_sleep_ns > 0 && handled > 0) {
        // Blocks are streaming in: let several gather rather than wake for each. Not on the signal
        // group, so the writer has no sleeper to wake either.
        (void)core::sleep_until(now + std::min(report.batch_sleep_ns, end != 0 ? end - now : report.batch_sleep_ns), &stop,
                                kWaitSliceNs);
        continue;
      }
      // Idle: any block published since the last wait makes this return at once, none is slept through.
      (void)watcher->wait(slice);
    }
    report.stopped = stop.load(std::memory_order_relaxed);
    // What the inputs already hold is handled before the shards flush, so their final partial
    // results reach the last published block (bounded: a writer that keeps going is cut off).
    for (std::uint32_t turn = 0; turn < kDrainTurnsAtStop; ++turn) {
      bool busy = false;
      for (std::uint32_t i = 0; i < count; ++i) busy = instances[i]->poll(kBlocksPerTurn, dog, i) == kBlocksPerTurn || busy;
      if (!busy) break;
    }
  }  // the watchdog stops before the shards do: stop() may take its time
  report.elapsed_s = static_cast<double>(core::monotonic_ns() - begin) / kNsPerS;
  for (const auto& i : instances) report.instances.push_back(i->finish());
  return report;
}

}  // namespace weir::shard_host

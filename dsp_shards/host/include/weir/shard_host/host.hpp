#pragma once
// The shard host: what `weir shard` runs. Loads one shard, resolves its input (a channel, or every
// channel carrying a label: one instance each, all in this process), configures an instance per
// input, then sleeps on the inputs' signal groups and processes each block in place until stopped.
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "weir/core/arena.hpp"
#include "weir/core/arena_layout.hpp"
#include "weir/core/error.hpp"
#include "weir/shard_host/host_limits.hpp"
#include "weir/shard_host/params.hpp"
#include "weir/shard_host/shard_instance.hpp"

namespace weir::shard_host {

struct HostOptions {
  std::string shard;              // built-in kind, or a path to a .so (loader.hpp)
  std::string input;              // channel name or label
  std::vector<ParamArg> params;   // --param name=value, in order
  std::string output_base;        // empty: each input's name; refused when a label matches several
  core::ConsumerPolicy policy = core::ConsumerPolicy::lossy;
  std::string instance;           // consumer name; empty: "<kind>.<input>"; with a label: "<instance>.<input>"
  double duration_s = 0;          // stop after this long (0: until stopped)
  double watchdog_s = kDefaultWatchdogS;  // one process() call longer than this aborts the host (0: off)
  /// While blocks stream in, the host sleeps this long between turns and handles what gathered, in
  /// place of one wake-up per block (and the writer's FUTEX_WAKE for it); an idle input is waited
  /// for on its signal group as ever. Adds up to this much latency to the outputs. 0: wake per
  /// block. Never used with the `latest` policy, and capped at a quarter of the input ring's span.
  std::int64_t batch_ns = kDefaultBatchNs;
  /// Called once every instance is configured and registered, before the first block; the reports
  /// carry names and outputs, zero counters.
  std::function<void(const std::vector<InstanceReport>&)> on_started;
};

struct HostReport {
  std::string shard;   // "shard 'fft'" / "shard './libgain.so'"
  std::string kind;
  bool by_label = false;
  std::vector<InstanceReport> instances;
  double elapsed_s = 0;
  std::uint64_t wakes = 0;       // times the loop slept (on the signal group or batching) and woke
  std::int64_t batch_sleep_ns = 0;  // the batching sleep used (0: a wake per block)
  bool stopped = false;  // ended by the stop flag (a signal) rather than the duration
};

/// Runs the host until `stop` is set (checked at least every kWaitSliceNs) or duration_s passes,
/// then stops every shard, releases its reader and writers and reports. Fails before processing
/// anything, naming the shard and the problem (loader.hpp, params.hpp, ShardInstance::create), for
/// an input that matches nothing, or --output with a label that matches several channels.
/// A shard that crashes takes only this process with it; one that hangs past the watchdog aborts
/// it (watchdog.hpp). Thread: the calling thread processes; a watchdog thread watches it.
/// `stop` may be set from any thread or a signal handler.
[[nodiscard]] core::Result<HostReport> run_host(const core::Arena& arena, const HostOptions& options,
                                                const std::atomic<bool>& stop);

}  // namespace weir::shard_host

#pragma once
// The micro-benchmarks behind `weir bench kv` (KvStore operations against a bare seqlock and
// memcpy) and `weir bench signals` (signal-group wake latency against a bare futex and a bare spin,
// and publish cost), each measured against its floors in the same run, with ratios and pass/miss
// targets. How to read them: bench/README.md.
#include <string>
#include <vector>

namespace weir::bench {

/// Runs the benchmark named by args[0] ("kv" or "signals") with its options:
///   --json      one JSON object per line on stdout, nothing else there
///   --reps N    repetitions per case (default 5); each case reports their median, min and max
///   --quick     about a tenth of the work per repetition, for tests
/// Creates a private arena ("bench.<pid>", "bench.signals.<pid>") and removes it before returning,
/// also on error. Returns 0 on success (targets missed included), 1 when a store call returned an
/// unexpected status, a wake went missing, a child failed or hung (it is killed), or the arena
/// could not be created, 2 on a usage error. Diagnostics go to stderr.
/// Thread: one at a time per process (it forks children for the cross-process cases and pins
/// itself to CPUs while they run).
[[nodiscard]] int run_bench(const std::vector<std::string>& args);

}  // namespace weir::bench

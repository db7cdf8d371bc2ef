#pragma once
// The KV micro-benchmark behind `weir bench kv`: KvStore operations against a bare seqlock and
// memcpy measured in the same run, with ratios and pass/miss targets. How to read it: bench/README.md.
#include <string>
#include <vector>

namespace weir::bench {

/// Runs the benchmark named by args[0] (only "kv" exists) with its options:
///   --json      one JSON object per line on stdout, nothing else there
///   --reps N    repetitions per case (default 5); each case reports their median, min and max
///   --quick     about a tenth of the work per repetition, for tests
/// Creates a private arena "bench.<pid>" and removes it before returning, also on error.
/// Returns 0 on success (targets missed included), 1 when a store call returned an unexpected
/// status or the arena could not be created, 2 on a usage error. Diagnostics go to stderr.
/// Thread: one at a time per process (it forks a reader child for the cross-process cases).
[[nodiscard]] int run_bench(const std::vector<std::string>& args);

}  // namespace weir::bench

#pragma once
// The entry to every benchmark suite (weir_bench, which `weir bench` hands over to): `kv` (KvStore
// operations against a bare seqlock and memcpy), `signals` (signal-group wake latency against a bare
// futex and a bare spin, and publish cost) and the others, each measured against its floors in the
// same run, with ratios and pass/miss targets. How to read them: bench/README.md.
#include <string>
#include <vector>

namespace weir::bench {

/// Runs the suite named by args[0] (kv, signals, vectors, channels, shards, recorder, kernels, udp,
/// pipeline; options may come before it) with its options:
///   --json      one JSON object per line on stdout, nothing else there
///   --reps N    repetitions per case (default 5); each case reports their median, min and max
///   --quick     about a tenth of the work per repetition, for tests
///   --weir P    the weir executable the pipeline suite starts parts with, and whose directory is
///               searched for shard plugins (default: $WEIR_CLI, weir beside this program,
///               ../tools/weir from its directory)
/// plus --only (recorder), --ann-1m and --ann-only (vectors) and the pipeline suite's own
/// (pipeline_bench.hpp); an option of one suite given to another is a usage error.
/// Creates a private arena ("bench.<pid>", "bench.signals.<pid>") and removes it before returning,
/// also on error. Returns 0 on success (targets missed included), 1 when a store call returned an
/// unexpected status, a wake went missing, a child failed or hung (it is killed), or the arena
/// could not be created, 2 on a usage error. Diagnostics go to stderr.
/// Thread: main, one at a time per process (it forks children for the cross-process cases and pins
/// itself to CPUs while they run, and sets $WEIR_SHARD_PATH).
[[nodiscard]] int run_bench(const std::vector<std::string>& args);

}  // namespace weir::bench

#pragma once
// The vectors and channels suites: what `weir bench vectors|channels` runs. Private to bench/.
// How to read them: bench/README.md.
#include <string>
#include <vector>

namespace weir::bench {

/// `weir bench vectors [--json] [--reps N] [--quick]`: top-10 search over 100k x 768 float vectors
/// (--quick: 10k) against a plain dot-product loop and a plain read of the same bytes. args: as
/// run_bench gets them (args[0], the suite's name, is skipped). Creates the arena
/// "bench.vectors.<pid>" and removes it before returning, also on error.
/// Returns kExitOk (missed targets included), kExitFailed when a search returned an unexpected
/// status or result, or set-up failed, kExitUsage on bad arguments. Thread: one at a time per process.
[[nodiscard]] int run_vector_suite(const std::vector<std::string>& args);

/// `weir bench channels [--json] [--reps N] [--quick]`: a channel's writer and a lossless reader
/// in two processes against a bare shared-memory SPSC ring, a Unix socket pair and ZeroMQ ipc
/// PUSH/PULL (when built with libzmq); the writer's rate with 0, 1 and 4 lossy readers; loss
/// accounting under overload. Creates the arena "bench.channels.<pid>" and removes it before
/// returning, also on error; every child that hangs is killed. Returns kExitOk (missed targets
/// included), kExitFailed when a transfer lost, reordered or corrupted a block, a child failed or
/// hung, the overload accounting was not exact, or set-up failed, kExitUsage on bad arguments.
/// Thread: one at a time per process (it forks children and pins itself to CPUs while they run).
[[nodiscard]] int run_channel_suite(const std::vector<std::string>& args);

}  // namespace weir::bench

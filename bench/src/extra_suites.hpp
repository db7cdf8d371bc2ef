#pragma once
// The suites besides kv and signals: what `weir bench vectors|channels|shards|recorder|kernels|udp|pipeline`
// runs. Private to bench/.
// How to read them: bench/README.md.
#include <string>
#include <vector>

#include "weir_exe.hpp"

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

/// `weir bench shards [--json] [--reps N] [--quick]`: the fft shard
/// through the host and the arena against a bare FFTW + window + |X|^2 loop, every shard's
/// processing time per block at 1 MS/s, and the host's overhead. Creates the arena
/// "bench.shards.<pid>" and removes it. Returns kExitOk (missed targets included), kExitFailed when
/// a shard could not run or lost blocks, kExitUsage on bad arguments.
[[nodiscard]] int run_shard_suite(const std::vector<std::string>& args);

/// `weir bench recorder [--json] [--reps N] [--quick]` (built with recorders/): the recorder
/// writing 4 KiB f32 blocks of 1 and 8 channels (1 GiB in all; --quick 64 MiB) with SWMR on
/// against a bare HDF5 append loop, its own drain rate (the largest lossless input rate), and the
/// time of an HDF5 snapshot of a 1 GiB arena (--quick 64 MiB). Files go to $TMPDIR (or /tmp) and
/// are removed. Returns kExitOk (missed targets included), kExitFailed when a case failed.
[[nodiscard]] int run_recorder_suite(const std::vector<std::string>& args);

/// `weir bench kernels [--json] [--reps N] [--quick]`: each built-in shard's process() called
/// directly on f32 blocks in memory, timed in alternation with the bare kernel it is built from
/// (stats: a vectorised min/max/sum pass), in ns per sample. Returns kExitOk (missed targets
/// included), kExitFailed when a shard could not be configured or process() failed, kExitUsage on
/// bad arguments.
[[nodiscard]] int run_kernel_suite(const std::vector<std::string>& args);

/// `weir bench udp [--json] [--reps N] [--quick]`: the UDP driver's receive path (acq::run_udp in a
/// forked child) against a bare recvmmsg loop at 1 KiB and 8 KiB i16 payloads over loopback, fed by
/// acq::run_udpgen in this process: draining a filled socket buffer, and behind a live sender; loss
/// counted exactly under injected loss. Creates the arena "bench.udp.<pid>" and removes it.
/// Returns kExitOk (missed targets included), kExitFailed when a receiver failed or hung, a fill
/// overflowed the socket buffer, or a loss count was not exact, kExitUsage on bad arguments.
/// Thread: one at a time per process (it forks children and pins itself to a CPU while they run).
[[nodiscard]] int run_udp_suite(const std::vector<std::string>& args);

/// `weir bench pipeline [options]` (pipeline_bench.cpp): parses args (args[0], the suite's name, is
/// skipped; --weir taken out already) and runs run_pipeline_bench with `weir` starting the process
/// parts. Returns kExitOk (done, or --help), kExitFailed when the pipeline or a kernel alone failed or
/// no weir executable was found (weir.looked_for named), kExitUsage on bad arguments.
/// Thread: main only (the supervisor installs signal handlers).
[[nodiscard]] int run_pipeline_suite(const std::vector<std::string>& args, const WeirExe& weir);

}  // namespace weir::bench

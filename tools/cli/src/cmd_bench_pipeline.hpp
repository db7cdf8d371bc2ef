#pragma once
// `weir bench pipeline`: a whole pipeline under the supervisor, each stage's CPU per sample next to
// its kernel alone in the same run (cmd_bench_pipeline.cpp).
#include <cstdint>
#include <string>

namespace weir::tools {

struct PipelineBenchOptions {
  std::uint32_t channels = 4;      // simulated f32 channels, one sim driver each
  double rate_msps = 16;           // aggregate input, MS/s
  std::uint32_t block = 16384;     // samples per block
  double duration_s = 5;           // per pipeline run
  int reps = 5;                    // pipeline runs and kernel-alone repetitions; medians are reported
  bool fir = false;                // a filter shard (101 taps, decimate 4) on every channel too
  bool processes = false;          // shards as processes (thread = false)
  bool threads = false;            // shards as threads of weir run (thread = true)
  double batch_ms = -1;            // shards' batch_ms; -1: the host's default
  bool quick = false;              // fewer blocks for the kernels alone (tests)
  bool json = false;
  std::string dir;                 // recordings and scratch files; empty: the temp directory
};

/// Runs the benchmark and prints its table (or one JSON object); returns the exit code.
/// Thread: main only (it runs a pipeline under the supervisor, which owns the signal handlers).
int run_bench_pipeline(const PipelineBenchOptions& options);

}  // namespace weir::tools

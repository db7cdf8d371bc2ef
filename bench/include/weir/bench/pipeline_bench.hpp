#pragma once
// The pipeline suite (`weir_bench pipeline`, `weir bench pipeline`): a whole pipeline (sim -> fft +
// stats (+ filter) on each channel -> one lossless HDF5 recorder) run by the supervisor as `weir run`
// runs it, and each stage's CPU cost per sample there next to the same kernel alone, in the same run.
// How to read it: bench/README.md, "Pipeline stages".
#include <cstdint>
#include <string>

namespace weir::bench {

struct PipelineBenchOptions {
  std::uint32_t channels = 4;   // simulated f32 channels, one sim driver each
  double rate_msps = 16;        // aggregate input, MS/s
  std::uint32_t block = 16384;  // samples per block
  double duration_s = 5;        // per pipeline run
  int reps = 5;                 // pipeline runs and kernel-alone repetitions; medians are reported
  bool fir = false;             // a filter shard (101 taps, decimate 4) on every channel too
  bool processes = false;       // shards as processes (thread = false)
  bool threads = false;         // shards as threads of the supervisor (thread = true)
  double batch_ms = -1;         // shards' batch_ms; -1: the host's default
  bool quick = false;           // fewer blocks for the kernels alone (tests)
  bool json = false;            // one JSON object on stdout instead of the table
  std::string dir;              // recordings and scratch files; empty: the temp directory
  std::string weir_exe;         // the weir executable that runs the pipeline's process parts
};

/// Runs the benchmark and prints its table (or one JSON object); returns 0 (done), 1 (the pipeline
/// or a kernel alone failed; its log goes to stderr) or 2 (options out of range).
/// Thread: main only (it runs a pipeline under the supervisor, which owns the signal handlers).
[[nodiscard]] int run_pipeline_bench(const PipelineBenchOptions& options);

}  // namespace weir::bench

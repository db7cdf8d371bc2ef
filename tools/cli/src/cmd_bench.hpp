#pragma once
// `weir bench`: a thin front for the benchmark library in bench/ (target weir::bench_suites).
#include <string>
#include <vector>

namespace weir::tools {

inline constexpr int kDefaultBenchReps = 5;  // repetitions per benchmark unless --reps says otherwise

struct BenchOptions {
  std::string suite = "kv";  // which benchmark suite; only "kv" exists
  int reps = kDefaultBenchReps;
  bool quick = false;        // shorter runs for smoke tests
  bool json = false;         // one JSON object on stdout
  std::string only;          // the recorder suite: one line (live, drain, fsync, snapshot, codec); "" all
  bool ann_1m = false;       // the vectors suite: also the ann rows over 1M x 128 (bench/src/ann_cases.cpp)
  bool ann_only = false;     // the vectors suite: the ann rows alone
};

/// The argument list handed to weir::bench::run_bench: {"kv", "--reps", "N", ["--quick"], ["--json"],
/// ["--only", LINE]}.
[[nodiscard]] std::vector<std::string> bench_arguments(const BenchOptions& options);

/// Runs the benchmark suite and returns the process exit code. Thread: main only.
int run_bench_kv(const BenchOptions& options);

}  // namespace weir::tools

#pragma once
// `weir run FILE` without its command line: creates the arena a pipeline file declares, starts every
// driver, shard and recorder as its own process (or thread), supervises them, shows a live status,
// reloads the file on SIGHUP, and stops everything in order on SIGINT/SIGTERM or a duration.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/error.hpp"
#include "weir/supervisor/check_pipeline.hpp"

namespace weir::supervisor {

/// The key in which a running supervisor leaves its pid (u64), so `weir reload` can find it.
inline constexpr const char* kRunPidKey = "weir.run.pid";
/// The run number every recorder of the running pipeline writes (u64): one per `weir run` start.
inline constexpr const char* kRunNumberKey = "weir.run.number";
/// Each part's state as the supervisor sees it, updated when it changes: weir.part.<NAME>.state (text:
/// running, restarting, finished, given up, stopped, configuration error), .restarts (u64) and
/// .last_exit (text: "exit 4 (disk fault)", "killed by SIGKILL"; "" before it ever ended).
inline constexpr const char* kPartKeyPrefix = "weir.part.";

struct RunOptions {
  std::string file;           // the pipeline file (Lua 5.4)
  double duration_s = 0;      // stop after this long; 0: until SIGINT or SIGTERM
  double status_every_s = 10;  // between status log lines when stdout is not a terminal
  double grace_s = 5;         // a part's time to leave on SIGTERM before SIGKILL
  bool replace = false;       // create over a stale arena of the same name
  bool keep = false;          // keep an shm arena after the run instead of removing it
  /// The weir executable a process part runs (`weir PART ARGS...`): this program by default, as in
  /// `weir run`; another program that runs pipelines (the benchmark) names the weir binary.
  std::string weir_exe = "/proc/self/exe";
  /// Parses each part's command line as its subcommand will, before anything starts (check_pipeline()).
  ArgsCheck check_args;
  /// Where log lines go; empty: stdout (with a live status line on a terminal).
  std::function<void(const std::string&)> log;
};

/// What one part cost over a run: its CPU time next to what it handled, from the arena's counters.
struct PartCost {
  std::string name, title;       // `fft:in0`, `shard "fft:in0"`
  std::string role;              // "driver", "shard", "record"
  std::string kind;              // "sim", "fft", "hdf5", ...
  bool thread = false;           // ran as a thread of `weir run`
  int cpu = -1;                  // pinned to this CPU; -1: not pinned
  double cpu_s = 0;              // user + system; a thread part: its own thread's
  std::uint64_t samples = 0;     // drivers: written into their channels; shards and recorders: read
  std::uint64_t blocks = 0;      // likewise, in blocks
  std::uint64_t lost = 0;        // blocks lapped (shards, recorders) or dropped at the source (drivers)
  std::uint64_t proc_p50_ns = 0;  // shards: time in process() per block, recent p50 (0: not known)
  std::uint32_t samples_per_block = 0;  // of its input (shards, recorders) or output (drivers)
  /// CPU time per sample handled; 0 when it handled none.
  [[nodiscard]] double ns_per_sample() const noexcept {
    return samples != 0 ? cpu_s * 1e9 / static_cast<double>(samples) : 0.0;
  }
};

/// What a finished run reports, besides its log.
struct RunReport {
  std::uint64_t run = 0;         // the run number every recorder wrote
  /// Why the run did not go as asked: a part given up, a configuration error, an essential part
  /// down at the stop. Empty when all went well (`weir run` exits 0 only then).
  std::vector<std::string> failures;
  double run_s = 0;              // from the first part started to the last stopped
  double source_s = 0;           // from the first part started to the drivers stopped
  double source_rate_hz = 0;     // samples per second into the drivers' channels, all of them, from a
                                 // second into the run (a quarter of a shorter one) to the drivers' stop
  double supervisor_cpu_s = 0;   // `weir run` itself, its thread parts excluded
  int cpus = 0;                  // CPUs it was allowed to run on
  std::vector<PartCost> parts;   // in start order
  std::uint64_t lost = 0, dropped = 0, errors = 0, disk_bytes = 0;  // from the consumer rows at the stop
  std::uint64_t ledger_lost = 0;  // from the recorders' audited runs: every gap but restart markers, plus unaccounted
  std::vector<core::ChannelInfo> channels;  // as the run ended, drained, consumers still registered
};

/// Runs the pipeline until a signal or the duration ends it, logging to stdout (or options.log), and
/// logs a summary: each part, its channels' counters, and the CPU budget per stage. Installs
/// handlers for SIGINT, SIGTERM and SIGHUP for the rest of the process. Fails, before anything
/// starts, when the file does not load or the arena cannot be made.
/// Thread: main only; one run at a time per process.
[[nodiscard]] core::Result<RunReport> run_pipeline(const RunOptions& options);

/// The CPU budget per stage (parts grouped by role and kind) as lines for people: CPU time, share
/// of the CPU the run used and had, ns per sample, blocks, lost. Thread: any.
[[nodiscard]] std::string budget_table(const RunReport& report);

enum class ReloadRequest : std::uint8_t {
  sent,             // SIGHUP delivered to the supervisor
  no_supervisor,    // no run has left its pid in the arena
  supervisor_gone,  // the pid it left no longer exists
};

struct ReloadResult {
  ReloadRequest status = ReloadRequest::no_supervisor;
  std::uint64_t pid = 0;  // the supervisor's, when one was found
};

/// Asks the `weir run` that supervises `arena` to re-read its pipeline file (SIGHUP). Thread: any.
[[nodiscard]] ReloadResult request_reload(const core::Arena& arena);

}  // namespace weir::supervisor

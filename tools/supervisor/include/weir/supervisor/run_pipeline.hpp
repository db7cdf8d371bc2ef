#pragma once
// `weir run FILE` without its command line: creates the arena a pipeline file declares, starts every
// driver, shard and recorder as its own process (or thread), supervises them, shows a live status,
// reloads the file on SIGHUP, and stops everything in order on SIGINT/SIGTERM or a duration.
#include <cstdint>
#include <string>

#include "weir/core/arena.hpp"
#include "weir/core/error.hpp"

namespace weir::supervisor {

/// The key in which a running supervisor leaves its pid (u64), so `weir reload` can find it.
inline constexpr const char* kRunPidKey = "weir.run.pid";

struct RunOptions {
  std::string file;           // the pipeline file (Lua 5.4)
  double duration_s = 0;      // stop after this long; 0: until SIGINT or SIGTERM
  double status_every_s = 10;  // between status log lines when stdout is not a terminal
  double grace_s = 5;         // a part's time to leave on SIGTERM before SIGKILL
  bool replace = false;       // create over a stale arena of the same name
  bool keep = false;          // keep an shm arena after the run instead of removing it
};

/// Runs the pipeline until a signal or the duration ends it, logging to stdout, and prints a summary.
/// Installs handlers for SIGINT, SIGTERM and SIGHUP for the rest of the process. Fails, before
/// anything starts, when the file does not load or the arena cannot be made.
/// Thread: main only; one run per process.
[[nodiscard]] core::Result<void> run_pipeline(const RunOptions& options);

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

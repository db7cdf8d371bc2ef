#pragma once
// A user's command run for a notice: its own process (and process group), stdin from /dev/null,
// stdout and stderr shared with weir run, killed when it overruns its timeout.
#include <chrono>
#include <string>
#include <vector>

#include "weir/core/error.hpp"

namespace weir::alerts {

/// Runs `argv` (argv[0] a path, or a name looked up in PATH) and waits for it up to `timeout`, then
/// kills its process group. Success: exit status 0. Thread: any. Requires: argv is not empty.
/// Reaps only its own child (waitpid on its pid), so a supervisor's per-pid reaping is unaffected.
[[nodiscard]] core::Result<void> run_command(const std::vector<std::string>& argv, std::chrono::milliseconds timeout);

}  // namespace weir::alerts

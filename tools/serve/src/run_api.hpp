#pragma once
// The HTTP door into the arena's runs (weir::runctl, door "http"): GET /api/run shows the run state;
// POST /api/run/start, /api/run/stop and /api/run/abort (with --allow-control and a token) make the
// transitions. Every answer is one JSON object; an error is {"error": TEXT} with its HTTP status.
#include <cstdint>
#include <string>
#include <string_view>

#include "weir/core/arena.hpp"
#include "weir/core/error.hpp"
#include "weir/core/run_control.hpp"

namespace weir::serve {

inline constexpr std::string_view kHttpDoor = "http";

/// One answer: an HTTP status code and its JSON body.
struct RunAnswer {
  unsigned status = 200;
  std::string body;
};

/// What POST /api/run/start asks for: {"title", "operator", "sample", "comment" (strings), "number"
/// (a positive integer, 0 or absent: the next)}.
struct RunStartAsk {
  core::RunMeta meta;
  std::uint64_t number = 0;
};

/// Reads a start body (empty: all defaults). invalid_argument naming the field that is not a string
/// (or a positive integer), is not UTF-8, too long, or unknown; or saying the body is not a JSON
/// object. Pure.
[[nodiscard]] core::Result<RunStartAsk> parse_run_start(std::string_view body);

/// What POST /api/run/stop and /abort ask for: {"run": N} ends run N only (absent: whichever runs);
/// {"wait_s": S} waits at most S seconds (up to kMaxStopWaitS) for the recorders to close its files.
struct RunStopAsk {
  std::uint64_t run = 0;
  double wait_s = 0;  // 0: runctl::kDefaultCloseWaitNs
};

inline constexpr double kMaxStopWaitS = 600;  // the longest wait a stop may ask for

/// Reads a stop or abort body (empty: the defaults). invalid_argument naming the field that is
/// wrong or unknown, after `verb` ("run stop"). Pure.
[[nodiscard]] core::Result<RunStopAsk> parse_run_stop(std::string_view body, std::string_view verb = "run stop");

/// {"error": what} with the status an error of that code gets: invalid_argument 400, conflict
/// (the state machine refused) 409, busy 503, anything else 500.
[[nodiscard]] RunAnswer run_error(const core::Error& error);
[[nodiscard]] RunAnswer run_error(unsigned status, std::string_view what);

/// GET /api/run: state, run, highest, start_ns, stop_ns, elapsed_s (null when idle), ended, door,
/// title, operator, sample, comment, dir, enabled (a run directory is set) and the recorders taking
/// part (pid, alive, open_run, closed_run). Thread: any.
[[nodiscard]] std::string run_status_json(const core::Arena& arena);

/// Starts a run from the "http" door: 200 with the new status, or the refusal. Thread: not the I/O
/// thread (it may wait kRunLockWaitNs for another door's transition).
/// Requires: the arena is mapped writable.
[[nodiscard]] RunAnswer run_start(const core::Arena& arena, std::string_view body);

/// Stops (`how` stopped) or aborts the running run (RunStopAsk), waits for the recorders to close its files and
/// answers its run log row (run, files, blocks_written, blocks_recorded, blocks_lost, exact, ended,
/// ...) with "closed" and "late" (pids of recorders that did not close in time). Thread: not the I/O
/// thread (the wait takes up to runctl::kDefaultCloseWaitNs). Requires: the arena is mapped writable.
[[nodiscard]] RunAnswer run_stop(const core::Arena& arena, core::RunEnd how, std::string_view body);

}  // namespace weir::serve

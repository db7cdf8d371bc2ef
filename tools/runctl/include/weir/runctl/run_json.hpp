#pragma once
// The run's state and a run log row as JSON, the one shape every door that answers in JSON gives
// (`weir runctl status|stop --json`, `weir runs ls --json`, `GET /api/run`, the HTTP stop's answer).
#include <vector>

#include "weir/core/run_control.hpp"
#include "weir/json/json.hpp"
#include "weir/ledger/run_log.hpp"

namespace weir::runctl {

/// state, run, highest, start_ns, stop_ns, elapsed_s (null when idle), ended, door, title, operator,
/// sample, comment, transitions, dir, enabled (a run directory is set), and the recorders taking part
/// (pid, alive, open_run, closed_run, first_block_ns, closed_ns). Thread: any.
[[nodiscard]] json::JsonObject status_json(const core::RunStatus& status,
                                           const std::vector<core::RunRecorderSeen>& recorders);

/// run, start_ns, stop_ns, start and stop (ISO 8601 UTC, "" for none), title, operator, sample, files,
/// blocks_written, blocks_recorded, blocks_lost, exact, ended, door, note. Thread: any.
[[nodiscard]] json::JsonObject row_json(const ledger::RunLogRow& row);

}  // namespace weir::runctl

#pragma once
// The Kafka control topic as a door into an arena's runs: experiment control's pl72 (run start) starts
// a run of the arena, its 6s4t (run stop) for the same job stops it, at the stop time the message
// gives (a time already past stops it now). The run's title is the pl72's run_name, its comment the
// job id and the static metadata. Refusals (a run already running, a stop for another job) are logged
// with the run that holds the state, never fatal.
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "weir/core/arena.hpp"
#include "weir/core/error.hpp"
#include "weir/kafka/run_control.hpp"

namespace weir::kafka {

struct RunDoorCounts {
  std::uint64_t starts = 0, stops = 0, refused = 0, malformed = 0;
};

/// Follows the control topic (from its end when called) until `stop`; `log` gets one line per
/// message and what the arena's run control made of it. Fails only when the topic cannot be opened.
/// Thread: one.
[[nodiscard]] core::Result<RunDoorCounts> follow_run_control(const core::Arena& arena, const ControlOptions& options,
                                                             const std::atomic<bool>& stop,
                                                             const std::function<void(const std::string&)>& log);

}  // namespace weir::kafka

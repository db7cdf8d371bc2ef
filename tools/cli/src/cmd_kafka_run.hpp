#pragma once
// `weir kafka run start|stop`: experiment control's side of a run (pl72 / 6s4t to a control topic).
#include "command.hpp"

namespace weir::tools {

/// Registers `run start` and `run stop` under `kafka`. Requires: `action` outlives app.parse().
void add_kafka_run_commands(CLI::App& kafka, Action& action);

}  // namespace weir::tools

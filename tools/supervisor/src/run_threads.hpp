#pragma once
// Parts of a pipeline run as threads of `weir run` (thread = true): the same library calls the
// part's own command makes, with the supervisor's stop flag. A thread part shares the supervisor's
// fate: it trades the isolation of a process for one process less.
#include "run_plan.hpp"
#include "weir/acq/sim_driver.hpp"
#include "run_supervisor.hpp"
#include "weir/config/pipeline.hpp"

namespace weir::supervisor {

/// A sim driver's options from its declaration, checked (acq::validate) the way `weir sim` checks them.
[[nodiscard]] core::Result<acq::SimOptions> sim_options(const config::Pipeline& pipeline, const config::DriverDecl& driver);

/// The thread body for a part, or why it cannot run as a thread (the caller runs it as a process).
[[nodiscard]] core::Result<ThreadMain> thread_main_for(const config::Pipeline& pipeline, const PartPlan& plan);

}  // namespace weir::supervisor

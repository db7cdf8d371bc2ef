#pragma once
// check_pipeline() with what `weir run` needs besides: the parts' plans and the recorders' targets.
#include <string>
#include <vector>

#include "run_ledger.hpp"
#include "run_plan.hpp"
#include "weir/supervisor/check_pipeline.hpp"

namespace weir::supervisor {

struct Loaded {
  config::Pipeline pipeline;
  config::Resolved resolved;
  std::vector<PartPlan> parts;            // in start order
  std::vector<RecorderTarget> recorders;  // DIR-form prefix: the arena's name as the file declares it
};

/// Everything check_pipeline() checks; `for_run`: a recorder's directory may be created (it will be).
[[nodiscard]] core::Result<Loaded> load_checked(const std::string& file, const ArgsCheck& parse_args, bool for_run);

}  // namespace weir::supervisor

#pragma once
// The ann rows of the vectors suite (ann_cases.cpp). Private to bench/.
#include <string>
#include <vector>

#include "harness.hpp"
#include "suite_report.hpp"

namespace weir::bench {

struct AnnOptions {
  bool large = false;  // --ann-1m: also the 1M x 128 scale (its build takes minutes)
  bool only = false;   // --ann-only: the ann rows alone
};

/// args without the ann options, which it sets in `out`.
[[nodiscard]] std::vector<std::string> take_ann_options(const std::vector<std::string>& args, AnnOptions& out);
/// The ann.* rows: 100k x 768 (10k with --quick), and 1M x 128 when asked.
void run_ann_cases(const Config& config, const AnnOptions& options, Results& results, Fields& fields);

}  // namespace weir::bench

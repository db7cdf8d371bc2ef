#pragma once
// `weir bench`: hands its command line to weir_bench (bench/), the one home of the benchmark suites,
// so that the weir executable carries none of them.
#include <string>
#include <vector>

#include "weir/core/error.hpp"

namespace weir::tools {

/// The weir_bench executable: $WEIR_BENCH when set, else `weir_bench` beside this weir, else
/// `../bench/weir_bench` from this weir's directory (the build tree: build/tools/weir and
/// build/bench/weir_bench). Fails when none is an executable file, naming where it looked and the
/// command that builds it. Thread: any.
[[nodiscard]] core::Result<std::string> find_weir_bench();

/// Replaces this process with weir_bench running `args` (the suite and its options) plus
/// `--weir <this weir>` unless args name one: the weir the pipeline suite starts its parts with.
/// Returns only when that fails: says why on stderr and returns kExitError. Thread: main only.
int exec_weir_bench(const std::vector<std::string>& args);

}  // namespace weir::tools

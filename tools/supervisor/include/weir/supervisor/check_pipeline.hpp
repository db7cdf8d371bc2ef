#pragma once
// Every check `weir run` makes before it starts anything, for `weir check` too: one function, so a
// pipeline that passes `weir check` starts.
#include <functional>
#include <string>
#include <vector>

#include "weir/config/pipeline.hpp"
#include "weir/core/error.hpp"

namespace weir::supervisor {

/// Parses one part's command line (`weir` subcommand and arguments, without the program) the way
/// that subcommand will, without running it; fails with the parser's message. Supplied by the
/// command line, which owns the subcommands.
using ArgsCheck = std::function<core::Result<void>(const std::vector<std::string>& args)>;

struct CheckedPipeline {
  config::Pipeline pipeline;
  config::Resolved resolved;
};

/// Loads and resolves the file, then checks what each part would run with: driver settings (sim's
/// signal against its channel's rate, replay's file readable, udp, scpi, serial, lua, bridges), each
/// recorder's options (rec::check_options, without creating its directory) and that no two
/// recorders write the same run to the same files, CPUs, and every part's command line through
/// `parse_args` (when given). Each refusal is `file:line: part: what`, naming the setting.
/// Starts nothing. Thread: main (shard kinds are configured to learn their outputs).
[[nodiscard]] core::Result<CheckedPipeline> check_pipeline(const std::string& file, const ArgsCheck& parse_args);

}  // namespace weir::supervisor

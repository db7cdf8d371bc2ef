#pragma once
// A program that runs a pipeline's parts of one control system, one process each, as `weir run`
// starts them: `PROGRAM SUBCOMMAND ARENA --pipeline FILE --part NAME [--duration S] [--json]`. Each
// runs until SIGINT/SIGTERM (or --duration) and prints its counters when it stops.
#include <atomic>
#include <span>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "weir/config/pipeline.hpp"
#include "weir/core/arena.hpp"
#include "weir/tools/arena_access.hpp"
#include "weir/tools/exit_codes.hpp"
#include "weir/tools/stop_signals.hpp"

namespace weir::controls {

struct PartArgs {
  std::string arena, pipeline, part;
  double duration_s = 0;
  bool json = false;
};

struct PartCommand {
  const char* name;  // "driver"
  const char* help;
  int (*run)(const PartArgs&);
};

/// Parses the command line into one of `commands` and returns its exit code. Thread: main.
[[nodiscard]] int run_part_program(int argc, char** argv, const char* title, std::span<const PartCommand> commands);

/// Loads the pipeline, finds the part with `find(pipeline, name)` (nullptr: a usage error, "declares
/// no `what` named ..."), opens the arena, installs the stop signals, and prints what
/// `run(pipeline, decl, arena, stop)` reports (its text, or JSON with --json). Thread: main.
template <class Find, class Run>
[[nodiscard]] int run_part(const PartArgs& a, std::string_view what, Find find, Run run) {
  auto pipeline = config::load_pipeline(a.pipeline);
  if (!pipeline) return tools::report_error("", pipeline.error());
  const auto* decl = find(*pipeline, a.part);
  if (decl == nullptr) return tools::report_usage(fmt::format("{} declares no {} named '{}'", a.pipeline, what, a.part));
  auto arena = tools::open_arena(a.arena, tools::Access::read_write);
  if (!arena) return tools::kExitError;
  const tools::StopSignals signals(tools::Sigpipe::ignore);
  auto report = run(*pipeline, *decl, *arena, tools::StopSignals::flag());
  if (!report) return tools::report_error("", report.error());
  fmt::print("{}\n", a.json ? report->json() : report->text());
  return tools::kExitOk;
}

/// The pipeline's `driver "KIND"` named `name`, or nullptr.
[[nodiscard]] const config::DriverDecl* find_driver(const config::Pipeline& pipeline, std::string_view kind,
                                                    std::string_view name);

}  // namespace weir::controls

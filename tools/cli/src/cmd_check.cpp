// `weir check FILE`: loads a pipeline file in its restricted Lua state, checks every part and the
// arena it needs, and prints the resolved pipeline without starting anything.
#include <memory>
#include <string>

#include <fmt/format.h>

#include "command.hpp"
#include "weir/config/pipeline.hpp"
#include "weir/supervisor/pipeline_drivers.hpp"
#include "weir/supervisor/pipeline_shards.hpp"
#include "weir/tools/output.hpp"

namespace weir::tools {
namespace {

struct CheckArgs {
  std::string file;
};

int run_check(const CheckArgs& args) {
  auto pipeline = config::load_pipeline(args.file);
  if (!pipeline) {
    print_error(pipeline.error().what);
    return kExitError;
  }
  auto resolved = config::resolve(*pipeline, supervisor::pipeline_shard_resolver());
  if (!resolved) {
    print_error(resolved.error().what);
    return kExitError;
  }
  if (auto drivers = supervisor::check_drivers(*pipeline); !drivers) {
    print_error(drivers.error().what);
    return kExitError;
  }
  fmt::print("{}", config::describe(*pipeline, *resolved));
  fmt::print("ok: nothing started\n");
  return kExitOk;
}

}  // namespace

void add_check_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* sub = app.add_subcommand("check", "Check a pipeline file and print what it would run, starting nothing");
  sub->add_option("FILE", args->file, "pipeline file (Lua 5.4)")->required();
  bind_action(*sub, action, args, &run_check);
}

}  // namespace weir::tools

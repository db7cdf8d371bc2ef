// `weir check FILE`: loads a pipeline file in its restricted Lua state, makes every check `weir run`
// makes before it starts anything (each part's settings as the part itself checks them), and prints
// the resolved pipeline without starting anything.
#include <memory>
#include <string>

#include <fmt/format.h>

#include "command.hpp"
#include "weir/config/pipeline.hpp"
#include "weir/supervisor/check_pipeline.hpp"
#include "weir/tools/output.hpp"

namespace weir::tools {
namespace {

struct CheckArgs {
  std::string file;
};

int run_check(const CheckArgs& args) {
  auto checked = supervisor::check_pipeline(args.file, &parse_part_args);
  if (!checked) {
    print_error(checked.error().what);
    return kExitError;
  }
  fmt::print("{}", config::describe(checked->pipeline, checked->resolved));
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

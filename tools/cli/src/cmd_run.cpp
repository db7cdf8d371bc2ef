// `weir run FILE` and `weir reload NAME`: the command line of the pipeline supervisor
// (weir::supervisor), which does the work.
#include <memory>
#include <string>

#include <fmt/format.h>

#include "command.hpp"
#include "weir/supervisor/run_pipeline.hpp"
#include "weir/tools/arena_access.hpp"
#include "weir/tools/output.hpp"

namespace weir::tools {
namespace {

int run_run(const supervisor::RunOptions& args) {
  if (auto ran = supervisor::run_pipeline(args); !ran) return report_error("", ran.error());
  return kExitOk;
}

struct ReloadArgs {
  std::string where;
};

int run_reload(const ReloadArgs& args) {
  auto arena = open_arena(args.where, Access::read_only);
  if (!arena) return kExitError;
  const supervisor::ReloadResult asked = supervisor::request_reload(*arena);
  switch (asked.status) {
    case supervisor::ReloadRequest::sent:
      fmt::print("asked weir run (pid {}) to reload its pipeline file\n", asked.pid);
      return kExitOk;
    case supervisor::ReloadRequest::no_supervisor:
      print_error(fmt::format("arena '{}': no `weir run` supervises it", args.where));
      return kExitError;
    case supervisor::ReloadRequest::supervisor_gone:
      print_error(fmt::format("arena '{}': its supervisor (pid {}) is gone", args.where, asked.pid));
      return kExitError;
  }
  return kExitError;
}

}  // namespace

void add_run_commands(CLI::App& app, Action& action) {
  auto args = std::make_shared<supervisor::RunOptions>();
  CLI::App* sub = app.add_subcommand("run", "Run a pipeline file: create its arena, start and supervise every part");
  sub->add_option("FILE", args->file, "pipeline file (Lua 5.4); `weir check FILE` shows what it runs")->required();
  sub->add_option("--duration", args->duration_s, "stop after this many seconds (default: until SIGINT/SIGTERM)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--status-every", args->status_every_s, "seconds between status log lines when not on a terminal")
      ->capture_default_str();
  sub->add_option("--grace", args->grace_s, "seconds a part gets to stop on SIGTERM before SIGKILL")->capture_default_str();
  sub->add_flag("--replace", args->replace, "create over a stale arena of the same name");
  sub->add_flag("--keep", args->keep, "keep the arena after the run (shm arenas are removed by default)");
  bind_action(*sub, action, args, &run_run);

  auto rargs = std::make_shared<ReloadArgs>();
  CLI::App* rsub = app.add_subcommand("reload", "Make the `weir run` of an arena re-read its pipeline file (SIGHUP)");
  add_name_option(*rsub, rargs->where);
  bind_action(*rsub, action, rargs, &run_reload);
}

}  // namespace weir::tools

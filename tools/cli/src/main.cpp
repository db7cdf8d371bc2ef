// weir: create, inspect and edit weir arenas from the shell.
// Exit codes: 0 success, 1 the command failed, 2 the command line is wrong (see command.hpp).
#include <exception>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "command.hpp"
#include "weir/tools/output.hpp"

int main(int argc, char** argv) {
  using namespace weir::tools;
  CLI::App app{"Create, inspect and edit weir shared-memory arenas.\n"
               "NAME is an shm name (/dev/shm/weir.NAME), a file path containing '/', or memfd:NAME.",
               "weir"};
  app.set_version_flag("--version", WEIR_VERSION);
  app.require_subcommand(1);

  Action action;
  add_arena_commands(app, action);
  add_inspect_commands(app, action);
  add_kv_commands(app, action);
  add_kv_atomic_commands(app, action);
  add_vector_commands(app, action);
  add_watch_commands(app, action);
  add_bench_command(app, action);
  add_sim_command(app, action);
  add_lua_driver_command(app, action);
  add_demo_command(app, action);
  add_scope_command(app, action);
  add_shard_command(app, action);
  add_record_command(app, action);
  add_repair_command(app, action);
  add_audit_command(app, action);
  add_replay_command(app, action);
  add_udp_commands(app, action);
  add_check_command(app, action);
  add_run_commands(app, action);
  add_runctl_commands(app, action);
  add_instrument_commands(app, action);
  add_bridge_commands(app, action);
  add_kafka_commands(app, action);
  add_serve_command(app, action);
  add_ann_commands(app, action);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version arrive here with exit code 0; everything else is a usage error.
    return app.exit(e) == kExitOk ? kExitOk : kExitUsage;
  }
  if (!action) return kExitUsage;  // unreachable with require_subcommand(1); kept as a guard
  try {
    return action();
  } catch (const std::exception& e) {  // allocation failure or a library throwing: still one message
    print_error(e.what());
    return kExitError;
  }
}

#pragma once
// How the weir subcommands plug into main(): each group registers its subcommands on the app, and
// the parsed subcommand leaves an Action behind that main() runs once parsing has succeeded.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "weir/core/error.hpp"
#include "weir/tools/exit_codes.hpp"

namespace weir::tools {

/// The work of the subcommand that was parsed; returns the process exit code.
using Action = std::function<int()>;

/// Makes `sub`, once parsed, leave behind an action that runs `run` on the parsed `args`.
/// Requires: `action` outlives app.parse().
template <class Args>
void bind_action(CLI::App& sub, Action& action, std::shared_ptr<Args> args, int (*run)(const Args&)) {
  sub.callback([&action, args, run] { action = [args, run] { return run(*args); }; });
}

/// Parses a pipeline part's command line (subcommand and arguments, no program name) as the
/// subcommand will, running nothing; fails with the parser's message. Thread: main only.
[[nodiscard]] core::Result<void> parse_part_args(const std::vector<std::string>& args);

/// The NAME positional every arena command takes.
inline CLI::Option* add_name_option(CLI::App& sub, std::string& where) {
  return sub.add_option("NAME", where, "arena: shm name, file path containing '/', or memfd:NAME")->required();
}

/// The KEY positional of the key and vector commands.
inline CLI::Option* add_key_option(CLI::App& sub, std::string& key) {
  return sub.add_option("KEY", key, "key name")->required();
}

/// The --json flag: print exactly one JSON object on stdout instead of text for people.
inline CLI::Option* add_json_flag(CLI::App& sub, bool& json) {
  return sub.add_flag("--json", json, "print one JSON object instead of text");
}

/// Registers create, rm, sync, snapshot and restore. Requires: `action` outlives app.parse().
/// Thread: main only, like everything in the CLI.
void add_arena_commands(CLI::App& app, Action& action);
/// Registers info and ls. Requires: `action` outlives app.parse().
void add_inspect_commands(CLI::App& app, Action& action);
/// Registers get, set, del and keys. Requires: `action` outlives app.parse().
void add_kv_commands(CLI::App& app, Action& action);
/// Registers incr, decr, and, or, xor and not. Requires: `action` outlives app.parse().
void add_kv_atomic_commands(CLI::App& app, Action& action);
/// Registers vset, vget and vsearch. Requires: `action` outlives app.parse().
void add_vector_commands(CLI::App& app, Action& action);
/// Registers watch and label. Requires: `action` outlives app.parse().
void add_watch_commands(CLI::App& app, Action& action);
/// Registers bench. Requires: `action` outlives app.parse().
void add_bench_command(CLI::App& app, Action& action);
/// Registers sim. Requires: `action` outlives app.parse().
void add_sim_command(CLI::App& app, Action& action);
/// Registers lua-driver. Requires: `action` outlives app.parse().
void add_lua_driver_command(CLI::App& app, Action& action);
/// Registers demo. Requires: `action` outlives app.parse().
void add_demo_command(CLI::App& app, Action& action);
/// Registers scope. Requires: `action` outlives app.parse().
void add_scope_command(CLI::App& app, Action& action);
/// Registers shard. Requires: `action` outlives app.parse().
void add_shard_command(CLI::App& app, Action& action);
/// Registers record. Requires: `action` outlives app.parse().
void add_record_command(CLI::App& app, Action& action);
/// Registers repair. Requires: `action` outlives app.parse().
void add_repair_command(CLI::App& app, Action& action);
/// Registers audit. Requires: `action` outlives app.parse().
void add_audit_command(CLI::App& app, Action& action);
/// Registers replay. Requires: `action` outlives app.parse().
void add_replay_command(CLI::App& app, Action& action);
/// Registers check. Requires: `action` outlives app.parse().
void add_check_command(CLI::App& app, Action& action);
/// Registers udp and udpgen. Requires: `action` outlives app.parse().
void add_udp_commands(CLI::App& app, Action& action);
/// Registers runctl (start, stop, abort, status, enable) and runs ls. Requires: `action` outlives app.parse().
void add_runctl_commands(CLI::App& app, Action& action);
/// Registers run and reload. Requires: `action` outlives app.parse().
void add_run_commands(CLI::App& app, Action& action);
/// Registers scpi and serial. Requires: `action` outlives app.parse().
void add_instrument_commands(CLI::App& app, Action& action);
/// Registers bridge send, recv and keygen. Requires: `action` outlives app.parse().
void add_bridge_commands(CLI::App& app, Action& action);
/// Registers kafka send, recv and mock. Requires: `action` outlives app.parse().
void add_kafka_commands(CLI::App& app, Action& action);
/// Registers serve. Requires: `action` outlives app.parse().
void add_serve_command(CLI::App& app, Action& action);
/// Registers ann and vector search. Requires: `action` outlives app.parse().
void add_ann_commands(CLI::App& app, Action& action);

}  // namespace weir::tools

// A pipeline part's command line parsed by the subcommand that will run it, without running it:
// `weir check` and `weir run` refuse an option the part does not have, or a value it does not take,
// before anything starts.
#include <algorithm>

#include "command.hpp"
#include "weir/core/error.hpp"

namespace weir::tools {

core::Result<void> parse_part_args(const std::vector<std::string>& args) {
  CLI::App app{"a pipeline part", "weir"};
  app.require_subcommand(1);
  Action action;  // set by the parse, never run
  add_sim_command(app, action);
  add_lua_driver_command(app, action);
  add_shard_command(app, action);
  add_record_command(app, action);
  add_replay_command(app, action);
  add_udp_commands(app, action);
  add_instrument_commands(app, action);
  add_bridge_commands(app, action);
  add_kafka_commands(app, action);
  add_ann_commands(app, action);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes a vector last argument first
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return core::fail(core::Errc::invalid_argument, e.what());
  }
  return {};
}

}  // namespace weir::tools

// `weir serve NAME`: the arena over HTTP and WebSocket (weir::serve does the work): a web scope,
// spectrum and MCA views, a JSON API and Prometheus /metrics.
#include <memory>
#include <string>

#include "command.hpp"
#include "weir/serve/serve.hpp"
#include "weir/tools/arena_access.hpp"
#include "weir/tools/stop_signals.hpp"

namespace weir::tools {
namespace {

struct ServeArgs {
  serve::ServeOptions options;
  std::string token_file;
};

int run_serve_command(const ServeArgs& args) {
  serve::ServeOptions options = args.options;
  if (!args.token_file.empty()) {
    auto token = serve::read_token_file(args.token_file);
    if (!token) return report_error("", token.error());
    options.token = *token;
  }
  if (auto ok = serve::check_options(options); !ok) {
    report_error("", ok.error());
    return kExitUsage;
  }
  const StopSignals signals(Sigpipe::ignore);
  if (auto served = serve::run_serve(options, StopSignals::flag()); !served) return report_error("", served.error());
  return kExitOk;
}

}  // namespace

void add_serve_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* sub = app.add_subcommand(
      "serve", "Serve an arena over HTTP: web scope, spectrum and MCA views, JSON API, Prometheus /metrics");
  add_name_option(*sub, args->options.where);
  sub->add_option("--port", args->options.port, "TCP port (0: any free port, printed)")->capture_default_str();
  sub->add_option("--bind", args->options.bind, "address to listen on; anything but loopback needs a token")
      ->capture_default_str();
  auto* token = sub->add_option("--token", args->options.token,
                                "secret every request must present (?token=, Bearer header or cookie)");
  sub->add_option("--token-file", args->token_file, "read the token from this file's first line")->excludes(token);
  sub->add_flag("--allow-set", args->options.allow_set, "allow POST /api/set to write keys (read-only without)");
  sub->add_flag("--allow-control", args->options.allow_control,
                "allow POST /api/run/start, /api/run/stop and /api/run/abort to start and end runs (needs --token "
                "or --token-file)");
  sub->add_option("--fps", args->options.frames_per_s, "WebSocket frames per second")->capture_default_str();
  sub->add_option("--allow-host", args->options.allow_hosts,
                  "a name requests may give as their Host (repeatable); localhost and IP addresses always may")
      ->type_name("NAME");
  sub->add_option("--stale-after", args->options.stale_after_s,
                  "seconds without a new block after which a channel is stale (default: 2 s or 4 block periods)")
      ->check(CLI::PositiveNumber)
      ->type_name("SECONDS");
  sub->add_option("--disk", args->options.disk_paths, "directory whose free space /metrics reports (repeatable)");
  bind_action(*sub, action, args, &run_serve_command);
}

}  // namespace weir::tools

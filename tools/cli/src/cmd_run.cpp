// `weir run FILE` and `weir reload NAME`: the command line of the pipeline supervisor
// (weir::supervisor), which does the work.
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "command.hpp"
#include "weir/config/pipeline.hpp"
#include "weir/serve/serve.hpp"
#include "weir/supervisor/run_pipeline.hpp"
#include "weir/tools/arena_access.hpp"
#include "weir/tools/output.hpp"
#include "weir/tools/value_codec.hpp"

namespace weir::tools {
namespace {

struct RunArgs {
  supervisor::RunOptions run;
  std::string serve;             // ADDR:PORT for weir serve beside the run; "" for none
  std::string serve_token_file;
  bool serve_allow_control = false;
};

constexpr double kServeArenaWait = 60;  // seconds the server waits for the run to create its arena

// `--serve ADDR:PORT`: weir serve on the pipeline's arena, in a thread beside the supervisor, with
// the recorders' output directories as its disk gauges.
std::optional<serve::ServeOptions> serve_options(const RunArgs& args) {
  serve::ServeOptions o;
  const auto colon = args.serve.rfind(':');
  const auto port = colon == std::string::npos ? std::nullopt : parse_u64(args.serve.substr(colon + 1));
  if (!port || *port > 65535) {
    report_usage("run: --serve takes ADDR:PORT, e.g. 127.0.0.1:9100");
    return std::nullopt;
  }
  o.bind = args.serve.substr(0, colon);
  if (o.bind.size() > 2 && o.bind.front() == '[' && o.bind.back() == ']') o.bind = o.bind.substr(1, o.bind.size() - 2);
  o.port = static_cast<std::uint16_t>(*port);
  if (!args.serve_token_file.empty()) {
    auto token = serve::read_token_file(args.serve_token_file);
    if (!token) {
      report_error("run", token.error());
      return std::nullopt;
    }
    o.token = *token;
  }
  o.allow_control = args.serve_allow_control;
  if (o.allow_control && o.token.empty()) {
    report_usage("run: refusing --serve-allow-control without a token: anyone who reaches the server could start "
                 "and stop runs; give --serve-token-file F with it");
    return std::nullopt;
  }
  auto pipeline = config::load_pipeline(args.run.file);
  if (!pipeline) {
    report_error("", pipeline.error());
    return std::nullopt;
  }
  o.where = pipeline->arena.name;
  for (const auto& r : pipeline->records)
    if (!r.out.empty()) o.disk_paths.push_back(r.out);
  o.wait_for_arena_s = kServeArenaWait;
  if (auto ok = serve::check_options(o); !ok) {
    report_error("run", ok.error());
    return std::nullopt;
  }
  return o;
}

int run_run(const RunArgs& args) {
  std::optional<serve::ServeOptions> served;
  if (!args.serve.empty() && !(served = serve_options(args))) return kExitUsage;
  std::atomic<bool> stop_serving{false};
  std::thread server;
  if (served)
    server = std::thread([&] {
      if (auto ok = serve::run_serve(*served, stop_serving); !ok) report_error("run: --serve", ok.error());
    });
  supervisor::RunOptions options = args.run;
  options.check_args = &parse_part_args;
  auto ran = supervisor::run_pipeline(options);
  stop_serving.store(true);
  if (server.joinable()) server.join();
  if (!ran) return report_error("", ran.error());
  // A part given up, a configuration error or an essential part down: a service manager restarts us.
  return ran->failures.empty() ? kExitOk : kExitError;
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
  auto all = std::make_shared<RunArgs>();
  supervisor::RunOptions* args = &all->run;
  CLI::App* sub = app.add_subcommand("run", "Run a pipeline file: create its arena, start and supervise every part");
  sub->add_option("FILE", args->file, "pipeline file (Lua 5.4); `weir check FILE` shows what it runs")->required();
  sub->add_option("--duration", args->duration_s, "stop after this many seconds (default: until SIGINT/SIGTERM)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--status-every", args->status_every_s, "seconds between status log lines when not on a terminal")
      ->capture_default_str();
  sub->add_option("--grace", args->grace_s, "seconds a part gets to stop on SIGTERM before SIGKILL")->capture_default_str();
  sub->add_flag("--replace", args->replace, "create over a stale arena of the same name");
  sub->add_flag("--keep", args->keep, "keep the arena after the run (shm arenas are removed by default)");
  sub->add_option("--serve", all->serve,
                  "also serve the arena (web view, JSON API, Prometheus /metrics) on ADDR:PORT, e.g. 127.0.0.1:9100");
  sub->add_option("--serve-token-file", all->serve_token_file, "token for --serve (needed off loopback)");
  sub->add_flag("--serve-allow-control", all->serve_allow_control,
                "let --serve start and end runs (POST /api/run/start|stop|abort); needs --serve-token-file");
  bind_action(*sub, action, all, &run_run);

  auto rargs = std::make_shared<ReloadArgs>();
  CLI::App* rsub = app.add_subcommand("reload", "Make the `weir run` of an arena re-read its pipeline file (SIGHUP)");
  add_name_option(*rsub, rargs->where);
  bind_action(*rsub, action, rargs, &run_reload);
}

}  // namespace weir::tools

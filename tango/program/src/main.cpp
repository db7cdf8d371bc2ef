// weir-tango: a pipeline's Tango parts, one process each, as `weir run` starts them:
//   weir-tango driver ARENA --pipeline FILE --part NAME   driver "tango": attributes into keys, a log, spectra
//   weir-tango serve ARENA --pipeline FILE --part NAME    tango "serve": weir as a Tango device server
// Each runs until SIGINT/SIGTERM (or --duration) and prints its counters when it stops.
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "weir/config/pipeline.hpp"
#include "weir/tango/tango_driver.hpp"
#include "weir/tango/tango_server.hpp"
#include "weir/tools/arena_access.hpp"
#include "weir/tools/exit_codes.hpp"
#include "weir/tools/stop_signals.hpp"

namespace {

using namespace weir;

struct Args {
  std::string arena, pipeline, part;
  double duration_s = 0;
  bool json = false;
};

int run_driver(const Args& a) {
  auto pipeline = config::load_pipeline(a.pipeline);
  if (!pipeline) return tools::report_error("", pipeline.error());
  const config::DriverDecl* decl = nullptr;
  for (const config::DriverDecl& d : pipeline->drivers)
    if (d.name == a.part && d.kind == "tango") decl = &d;
  if (decl == nullptr) return tools::report_usage(fmt::format("{} declares no driver \"tango\" named '{}'", a.pipeline, a.part));
  auto arena = tools::open_arena(a.arena, tools::Access::read_write);
  if (!arena) return tools::kExitError;
  const tools::StopSignals signals(tools::Sigpipe::ignore);
  auto report = tango::run_driver(*arena, *pipeline, *decl, a.duration_s, tools::StopSignals::flag());
  if (!report) return tools::report_error("", report.error());
  fmt::print("{}\n", a.json ? report->json() : report->text());
  return tools::kExitOk;
}

int run_serve(const Args& a) {
  auto pipeline = config::load_pipeline(a.pipeline);
  if (!pipeline) return tools::report_error("", pipeline.error());
  const config::TangoDecl* decl = nullptr;
  for (const config::TangoDecl& t : pipeline->tangos)
    if (t.name == a.part) decl = &t;
  if (decl == nullptr) return tools::report_usage(fmt::format("{} declares no tango \"serve\" named '{}'", a.pipeline, a.part));
  auto arena = tools::open_arena(a.arena, tools::Access::read_write);
  if (!arena) return tools::kExitError;
  const tools::StopSignals signals(tools::Sigpipe::ignore);
  auto report = tango::run_server(*arena, *pipeline, *decl, a.duration_s, tools::StopSignals::flag());
  if (!report) return tools::report_error("", report.error());
  fmt::print("{}\n", a.json ? report->json() : report->text());
  return tools::kExitOk;
}

void add(CLI::App& app, const char* name, const char* help, const std::shared_ptr<Args>& args, int (*run)(const Args&),
         int& code) {
  CLI::App* sub = app.add_subcommand(name, help);
  sub->add_option("arena", args->arena, "the arena: a shm name or a file path")->required();
  sub->add_option("--pipeline", args->pipeline, "the pipeline file that declares the part")->required();
  sub->add_option("--part", args->part, "the part's name in that file")->required();
  sub->add_option("--duration", args->duration_s, "stop after this many seconds")->check(CLI::PositiveNumber);
  sub->add_flag("--json", args->json, "print the counters as JSON");
  sub->callback([args, run, &code] { code = run(*args); });
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"weir-tango: a pipeline's Tango parts (weir run starts them)"};
  app.require_subcommand(1);
  int code = tools::kExitOk;
  add(app, "driver", "Run a pipeline's driver \"tango\": Tango attributes into keys, an attribute log and spectrum channels",
      std::make_shared<Args>(), &run_driver, code);
  add(app, "serve", "Run a pipeline's tango \"serve\": weir as a Tango device server: status, keys, channels, spectra and run control, events pushed",
      std::make_shared<Args>(), &run_serve, code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? tools::kExitOk : tools::kExitUsage;
  }
  return code;
}

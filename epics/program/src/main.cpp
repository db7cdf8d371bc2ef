// weir-epics: a pipeline's EPICS parts, one process each, as `weir run` starts them:
//   weir-epics driver ARENA --pipeline FILE --part NAME   driver "epics": PVs into keys, a PV log, waveforms
//   weir-epics serve ARENA --pipeline FILE --part NAME    epics "serve": weir's status, keys, channels, runs as PVs
// Each runs until SIGINT/SIGTERM (or --duration) and prints its counters when it stops.
#include <fcntl.h>
#include <unistd.h>

#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "weir/config/pipeline.hpp"
#include "weir/epics/ca_driver.hpp"
#include "weir/epics/epics_config.hpp"
#include "weir/epics/ioc_server.hpp"
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
    if (d.name == a.part && d.kind == "epics") decl = &d;
  if (decl == nullptr) return tools::report_usage(fmt::format("{} declares no driver \"epics\" named '{}'", a.pipeline, a.part));
  auto options = epics::driver_options(*decl);
  if (!options) return tools::report_error("", options.error());
  if (a.duration_s > 0) options->duration_s = a.duration_s;
  auto arena = tools::open_arena(a.arena, tools::Access::read_write);
  if (!arena) return tools::kExitError;
  const tools::StopSignals signals(tools::Sigpipe::ignore);
  auto report = epics::run_driver(*arena, *options, tools::StopSignals::flag());
  if (!report) return tools::report_error("", report.error());
  fmt::print("{}\n", a.json ? report->json() : report->text());
  return tools::kExitOk;
}

int run_serve(const Args& a) {
  auto pipeline = config::load_pipeline(a.pipeline);
  if (!pipeline) return tools::report_error("", pipeline.error());
  const config::EpicsDecl* decl = nullptr;
  for (const config::EpicsDecl& e : pipeline->epics)
    if (e.name == a.part) decl = &e;
  if (decl == nullptr) return tools::report_usage(fmt::format("{} declares no epics \"serve\" named '{}'", a.pipeline, a.part));
  auto options = epics::serve_options(*pipeline, *decl);
  if (!options) return tools::report_error("", options.error());
  auto arena = tools::open_arena(a.arena, tools::Access::read_write);
  if (!arena) return tools::kExitError;
  const tools::StopSignals signals(tools::Sigpipe::ignore);
  auto report = epics::run_server(*arena, *pipeline, *options, a.duration_s, tools::StopSignals::flag());
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
  // A CA client that finds no caRepeater starts one, which would inherit our stdout and stderr (the
  // supervisor's pipe) and hold them open for as long as it lives: it gets them closed instead.
  for (const int fd : {STDOUT_FILENO, STDERR_FILENO}) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  CLI::App app{"weir-epics: a pipeline's EPICS parts (weir run starts them)"};
  app.require_subcommand(1);
  int code = tools::kExitOk;
  add(app, "driver", "Run a pipeline's driver \"epics\": Channel Access monitors into keys, a PV log channel and waveform channels",
      std::make_shared<Args>(), &run_driver, code);
  add(app, "serve", "Run a pipeline's epics \"serve\": weir's status, keys, channels and run control as PVs (an IOC database)",
      std::make_shared<Args>(), &run_serve, code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? tools::kExitOk : tools::kExitUsage;
  }
  return code;
}

// weir-epics: a pipeline's EPICS parts, one process each, as `weir run` starts them:
//   weir-epics driver ARENA --pipeline FILE --part NAME   driver "epics": PVs into keys, a PV log, waveforms
//   weir-epics serve ARENA --pipeline FILE --part NAME    epics "serve": weir's status, keys, channels, runs as PVs
// Each runs until SIGINT/SIGTERM (or --duration) and prints its counters when it stops
// (controls/program: the skeleton weir-tango shares).
#include <fcntl.h>
#include <unistd.h>

#include "weir/controls/part_program.hpp"
#include "weir/epics/ca_driver.hpp"
#include "weir/epics/epics_config.hpp"
#include "weir/epics/ioc_server.hpp"

namespace {

using namespace weir;

int run_driver(const controls::PartArgs& a) {
  const auto find = [](const config::Pipeline& p, std::string_view name) { return controls::find_driver(p, "epics", name); };
  return controls::run_part(a, "driver \"epics\"", find,
                            [&](const config::Pipeline&, const config::DriverDecl& decl, const core::Arena& arena,
                                const std::atomic<bool>& stop) -> core::Result<epics::DriverReport> {
                              auto options = epics::driver_options(decl);
                              if (!options) return tl::make_unexpected(options.error());
                              if (a.duration_s > 0) options->duration_s = a.duration_s;
                              return epics::run_driver(arena, *options, stop);
                            });
}

int run_serve(const controls::PartArgs& a) {
  const auto find = [](const config::Pipeline& p, std::string_view name) -> const config::EpicsDecl* {
    for (const config::EpicsDecl& e : p.epics)
      if (e.name == name) return &e;
    return nullptr;
  };
  return controls::run_part(a, "epics \"serve\"", find,
                            [&](const config::Pipeline& pipeline, const config::EpicsDecl& decl, const core::Arena& arena,
                                const std::atomic<bool>& stop) -> core::Result<epics::ServeReport> {
                              auto options = epics::serve_options(pipeline, decl);
                              if (!options) return tl::make_unexpected(options.error());
                              return epics::run_server(arena, pipeline, *options, a.duration_s, stop);
                            });
}

constexpr controls::PartCommand kCommands[] = {
    {"driver", "Run a pipeline's driver \"epics\": Channel Access monitors into keys, a PV log channel and waveform channels",
     &run_driver},
    {"serve", "Run a pipeline's epics \"serve\": weir's status, keys, channels and run control as PVs (an IOC database)",
     &run_serve},
};

}  // namespace

int main(int argc, char** argv) {
  // A CA client that finds no caRepeater starts one, which would inherit our stdout and stderr (the
  // supervisor's pipe) and hold them open for as long as it lives: it gets them closed instead.
  for (const int fd : {STDOUT_FILENO, STDERR_FILENO}) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  return controls::run_part_program(argc, argv, "weir-epics: a pipeline's EPICS parts (weir run starts them)", kCommands);
}

// weir-tango: a pipeline's Tango parts, one process each, as `weir run` starts them:
//   weir-tango driver ARENA --pipeline FILE --part NAME   driver "tango": attributes into keys, a log, spectra
//   weir-tango serve ARENA --pipeline FILE --part NAME    tango "serve": weir as a Tango device server
// Each runs until SIGINT/SIGTERM (or --duration) and prints its counters when it stops
// (controls/program: the skeleton weir-epics shares).
#include "weir/controls/part_program.hpp"
#include "weir/tango/tango_driver.hpp"
#include "weir/tango/tango_server.hpp"

namespace {

using namespace weir;

int run_driver(const controls::PartArgs& a) {
  const auto find = [](const config::Pipeline& p, std::string_view name) { return controls::find_driver(p, "tango", name); };
  return controls::run_part(a, "driver \"tango\"", find,
                            [&](const config::Pipeline& pipeline, const config::DriverDecl& decl, const core::Arena& arena,
                                const std::atomic<bool>& stop) {
                              return tango::run_driver(arena, pipeline, decl, a.duration_s, stop);
                            });
}

int run_serve(const controls::PartArgs& a) {
  const auto find = [](const config::Pipeline& p, std::string_view name) -> const config::TangoDecl* {
    for (const config::TangoDecl& t : p.tangos)
      if (t.name == name) return &t;
    return nullptr;
  };
  return controls::run_part(a, "tango \"serve\"", find,
                            [&](const config::Pipeline& pipeline, const config::TangoDecl& decl, const core::Arena& arena,
                                const std::atomic<bool>& stop) {
                              return tango::run_server(arena, pipeline, decl, a.duration_s, stop);
                            });
}

constexpr controls::PartCommand kCommands[] = {
    {"driver", "Run a pipeline's driver \"tango\": Tango attributes into keys, an attribute log and spectrum channels",
     &run_driver},
    {"serve", "Run a pipeline's tango \"serve\": weir as a Tango device server: status, keys, channels, spectra and run "
              "control, events pushed",
     &run_serve},
};

}  // namespace

int main(int argc, char** argv) {
  return controls::run_part_program(argc, argv, "weir-tango: a pipeline's Tango parts (weir run starts them)", kCommands);
}

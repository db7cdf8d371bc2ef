#include "weir/controls/part_program.hpp"

#include <memory>

#include <CLI/CLI.hpp>

namespace weir::controls {

int run_part_program(int argc, char** argv, const char* title, std::span<const PartCommand> commands) {
  CLI::App app{title};
  app.require_subcommand(1);
  int code = tools::kExitOk;
  for (const PartCommand& c : commands) {
    auto args = std::make_shared<PartArgs>();
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    sub->add_option("arena", args->arena, "the arena: a shm name or a file path")->required();
    sub->add_option("--pipeline", args->pipeline, "the pipeline file that declares the part")->required();
    sub->add_option("--part", args->part, "the part's name in that file")->required();
    sub->add_option("--duration", args->duration_s, "stop after this many seconds")->check(CLI::PositiveNumber);
    sub->add_flag("--json", args->json, "print the counters as JSON");
    sub->callback([args, run = c.run, &code] { code = run(*args); });
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? tools::kExitOk : tools::kExitUsage;
  }
  return code;
}

const config::DriverDecl* find_driver(const config::Pipeline& pipeline, std::string_view kind, std::string_view name) {
  for (const config::DriverDecl& d : pipeline.drivers)
    if (d.name == name && d.kind == kind) return &d;
  return nullptr;
}

}  // namespace weir::controls

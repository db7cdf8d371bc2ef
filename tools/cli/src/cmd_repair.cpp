// `weir repair FILE...`: clears the SWMR write marks a killed `weir record` left in its files, so
// h5dump, plain h5py and every other HDF5 tool open them. One line per file says what was done.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "command.hpp"
#include "weir/recorder/repair.hpp"
#include "weir/tools/output.hpp"

namespace weir::tools {
namespace {

struct RepairArgs {
  std::vector<std::string> files;
  bool force = false;
  bool json = false;
};

int run_repair(const RepairArgs& args) {
  int exit_code = kExitOk;
  JsonArray rows;
  for (const std::string& file : args.files) {
    auto result = rec::repair_file(file, args.force);
    JsonObject row;
    row.text("file", file);
    std::string done;
    if (!result) {
      exit_code = kExitError;
      row.text("result", "failed").text("error", result.error().what);
      print_error(fmt::format("repair: {}", result.error().what));
    } else if (!result->was_marked) {
      done = "no write marks, nothing to do";
      row.text("result", "clean");
    } else {
      done = result->writer_pid != 0 ? fmt::format("cleared the write marks recorder pid {} on {} left",
                                                   result->writer_pid, result->writer_host)
                                     : std::string("cleared the write marks");
      row.text("result", "cleared");
      if (result->writer_pid != 0) row.number("writer_pid", result->writer_pid).text("writer_host", result->writer_host);
    }
    rows.raw(row.str());
    if (!args.json && result) fmt::print("{}: {}\n", file, done);
  }
  if (args.json) print_json(JsonObject().raw("files", rows.str()));
  return exit_code;
}

}  // namespace

void add_repair_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<RepairArgs>();
  CLI::App* sub = app.add_subcommand(
      "repair", "Clear the SWMR write marks a killed recorder left in its files (what h5clear -s does), so every "
                "HDF5 tool opens them; refuses a file whose recorder may still run");
  sub->add_option("FILE", args->files, "recording files (.h5)")->required()->expected(1, -1);
  sub->add_flag("--force", args->force,
                "clear the marks even of a file whose writer cannot be checked (another host, not a weir recording)");
  add_json_flag(*sub, args->json);
  bind_action(*sub, action, args, &run_repair);
}

}  // namespace weir::tools

// `weir scpi ARENA --pipeline FILE --part NAME` and `weir serial ...`: run one instrument driver
// declared in a pipeline (driver "scpi" over TCP, driver "serial" on a tty) until SIGINT/SIGTERM or
// --duration, and report its counters when it stops. `weir run` starts them this way.
#include <memory>
#include <string>

#include <fmt/format.h>

#include "command.hpp"
#include "weir/config/pipeline.hpp"
#include "weir/instrument/instrument_config.hpp"
#include "weir/instrument/instrument_driver.hpp"
#include "weir/instrument/lua_reply_parser.hpp"
#include "weir/tools/arena_access.hpp"
#include "weir/tools/output.hpp"
#include "weir/tools/stop_signals.hpp"

namespace weir::tools {
namespace {

struct InstrumentArgs {
  std::string kind;  // "scpi" or "serial"
  std::string where;
  std::string pipeline;
  std::string part;
  double duration_s = 0;
  bool json = false;
};

void print_report(const InstrumentArgs& args, const acq::InstrumentReport& r) {
  const acq::InstrumentCounters& c = r.counters;
  if (args.json) {
    JsonObject out;
    out.text("part", args.part)
        .text("driver", args.kind)
        .boolean("stopped", r.stopped)
        .real("elapsed_s", r.elapsed_s)
        .number("queries", c.queries)
        .number("replies", c.replies)
        .number("timeouts", c.timeouts)
        .number("mismatches", c.mismatches)
        .number("overlong", c.overlong)
        .number("disconnects", c.disconnects)
        .number("reconnects", c.reconnects)
        .number("connect_failures", c.connect_failures)
        .number("writes", c.writes)
        .number("write_failures", c.write_failures)
        .number("samples", c.samples)
        .number("parser_errors", c.parser_errors)
        .number("late", c.late)
        .number("unsent", c.unsent);
    const acq::InstrumentAccounting& a = r.accounting;
    JsonObject accounting;
    accounting.number("recorded", a.recorded)
        .number("timeout", a.timeout)
        .number("malformed", a.malformed)
        .number("driver_error", a.driver_error)
        .number("source_loss", a.source_loss)
        .number("late", a.late);
    out.raw("accounting", accounting.str());
    print_json(out);
    return;
  }
  fmt::print("{} '{}': {:.3f} s{}: {} queries, {} replies, {} timeouts, {} mismatches, {} overlong, {} disconnects, "
             "{} reconnects, {} connect failures, {} writes, {} write failures, {} samples, {} parser errors, "
             "{} late, {} unsent\n",
             args.kind, args.part, r.elapsed_s, r.stopped ? ", stopped by a signal" : "", c.queries, c.replies,
             c.timeouts, c.mismatches, c.overlong, c.disconnects, c.reconnects, c.connect_failures, c.writes,
             c.write_failures, c.samples, c.parser_errors, c.late, c.unsent);
}

int run_instrument_command(const InstrumentArgs& args) {
  auto pipeline = config::load_pipeline(args.pipeline);
  if (!pipeline) return report_error("", pipeline.error());
  const config::DriverDecl* decl = nullptr;
  for (const config::DriverDecl& d : pipeline->drivers)
    if (d.name == args.part) decl = &d;
  if (decl == nullptr) return report_usage(fmt::format("{} declares no driver named '{}'", args.pipeline, args.part));
  if (decl->kind != args.kind)
    return report_usage(fmt::format("{}: driver \"{}\" is a {} driver; run it with weir {}", decl->origin.where(),
                                    args.part, decl->kind, decl->kind));
  auto options = acq::instrument_options(*decl);
  if (!options) return report_error("", options.error());
  if (args.duration_s > 0) options->duration_s = args.duration_s;
  auto arena = open_arena(args.where, Access::read_write);
  if (!arena) return kExitError;
  const StopSignals signals(Sigpipe::ignore);
  auto report = acq::run_instrument(*arena, *options, StopSignals::flag(),
                                    acq::lua_reply_parser_factory(acq::lua_parser_limits(*options)));
  if (!report) return report_error("", report.error());
  print_report(args, *report);
  return kExitOk;
}

void add_one(CLI::App& app, Action& action, const std::string& kind, const std::string& help) {
  auto args = std::make_shared<InstrumentArgs>();
  args->kind = kind;
  CLI::App* sub = app.add_subcommand(kind, help);
  add_name_option(*sub, args->where);
  sub->add_option("--pipeline", args->pipeline, "the pipeline file that declares the driver")->required();
  sub->add_option("--part", args->part, "the driver's name in that file")->required();
  sub->add_option("--duration", args->duration_s, "stop after this many seconds")->check(CLI::PositiveNumber);
  add_json_flag(*sub, args->json);
  bind_action(*sub, action, args, &run_instrument_command);
}

}  // namespace

void add_instrument_commands(CLI::App& app, Action& action) {
  add_one(app, action, "scpi",
          "Run a pipeline's driver \"scpi\": query a line-based instrument over TCP on its periods into keys, "
          "forward keys to it, reconnect with back-off; Ctrl-C stops and reports");
  add_one(app, action, "serial",
          "Run a pipeline's driver \"serial\": the same over a serial line (termios settings from the pipeline)");
}

}  // namespace weir::tools

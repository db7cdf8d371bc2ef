// `weir runctl start|stop|abort|status|enable ARENA`: the command-line door into an arena's runs
// (docs/design/runs.md), and `weir runs ls DIR`: the run log of a recording directory.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "command.hpp"
#include "weir/core/clock.hpp"
#include "weir/core/run_control.hpp"
#include "weir/json/json.hpp"
#include "weir/ledger/run_log.hpp"
#include "weir/ledger/run_record.hpp"
#include "weir/runctl/doors.hpp"
#include "weir/runctl/run_json.hpp"
#include "weir/tools/arena_access.hpp"
#include "weir/tools/exit_codes.hpp"
#include "weir/tools/output.hpp"

namespace weir::tools {
namespace {

constexpr double kDefaultWaitS = 30;
constexpr std::string_view kDoor = "cli";

struct RunctlArgs {
  std::string verb;  // start, stop, abort, status, enable
  std::string where;
  std::string dir;   // enable
  core::RunMeta meta;
  std::uint64_t number = 0;  // start: this number; stop/abort: only this run
  double wait_s = kDefaultWaitS;
  bool json = false;
};

std::string when(std::int64_t ns) { return ns > 0 ? iso8601_utc(static_cast<std::uint64_t>(ns)) : "-"; }

int print_status(const RunctlArgs& a, const core::Arena& arena) {
  const core::RunStatus s = core::RunControl(arena).status();
  if (a.json) {
    print_json(runctl::status_json(s, core::RunControl(arena).recorders()));
    return kExitOk;
  }
  if (s.state == core::RunState::running) {
    const double elapsed = static_cast<double>(core::realtime_ns() - s.start_ns) / 1e9;
    fmt::print("{}: run {} running for {:.1f} s (started {} by {})\n", a.where, s.number, elapsed, when(s.start_ns), s.door);
  } else if (s.number != 0) {
    fmt::print("{}: idle; run {} {} at {} by {}\n", a.where, s.number, core::run_end_name(s.ended), when(s.stop_ns), s.door);
  } else {
    fmt::print("{}: idle; no run yet\n", a.where);
  }
  if (!s.meta.title.empty()) fmt::print("  title    {}\n", s.meta.title);
  if (!s.meta.operator_name.empty()) fmt::print("  operator {}\n", s.meta.operator_name);
  if (!s.meta.sample.empty()) fmt::print("  sample   {}\n", s.meta.sample);
  if (!s.meta.comment.empty()) fmt::print("  comment  {}\n", s.meta.comment);
  fmt::print("  run directory {}\n", s.dir.empty() ? "(none: controlled runs are not enabled)" : s.dir);
  for (const core::RunRecorderSeen& r : core::RunControl(arena).recorders())
    fmt::print("  recorder pid {}{}: {}\n", r.pid, r.alive ? "" : " (gone)",
               r.open_run != 0 ? fmt::format("recording run {}", r.open_run)
                               : fmt::format("idle, last closed run {}", r.closed_run));
  return kExitOk;
}

int run_runctl(const RunctlArgs& a) {
  auto arena = open_arena(a.where, a.verb == "status" ? Access::read_only : Access::read_write);
  if (!arena) return kExitError;
  if (a.verb == "status") return print_status(a, *arena);
  if (a.verb == "enable") {
    if (a.dir.empty()) return report_usage("runctl enable: give the run directory: weir runctl enable ARENA DIR");
    if (auto ok = runctl::enable(*arena, a.dir); !ok) return report_error("runctl enable", ok.error());
    fmt::print("{}: controlled runs enabled; numbers and the run log in {}\n", a.where, core::RunControl(*arena).status().dir);
    return kExitOk;
  }
  if (a.verb == "start") {
    auto s = runctl::start_run(*arena, a.meta, kDoor, a.number);
    if (!s) return report_error("runctl start", s.error());
    if (a.json)
      print_json(runctl::status_json(*s, core::RunControl(*arena).recorders()));
    else
      fmt::print("{}\n", s->number);
    return kExitOk;
  }
  const core::RunEnd how = a.verb == "abort" ? core::RunEnd::aborted : core::RunEnd::stopped;
  auto stopped = runctl::stop_run(*arena, kDoor, how, a.number, static_cast<std::int64_t>(a.wait_s * 1e9));
  if (!stopped) return report_error("runctl " + a.verb, stopped.error());
  if (a.json) {
    JsonObject o = runctl::row_json(stopped->row);
    o.boolean("closed", stopped->closed);
    print_json(o);
  } else {
    fmt::print("{}\n", runctl::ledger_line(stopped->row));
  }
  if (!stopped->closed)
    print_error(fmt::format("runctl {}: {} recorder(s) had not closed run {}'s files after {} s", a.verb,
                            stopped->late.size(), stopped->row.run, a.wait_s));
  return stopped->closed && stopped->row.exact ? kExitOk : kExitUnaccounted;
}

struct RunsArgs {
  std::string dir;
  std::string arena;  // the prefix; "" when the directory holds one run log
  bool json = false;
};

int run_runs_ls(const RunsArgs& a) {
  std::string prefix = a.arena;
  if (prefix.empty()) {
    std::error_code ec;
    int found = 0;
    for (std::filesystem::directory_iterator it(a.dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      const std::string suffix = ledger::kRunLogSuffix;
      if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
      prefix = name.substr(0, name.size() - suffix.size());
      ++found;
    }
    if (ec) return report_usage(fmt::format("runs ls {}: {}", a.dir, ec.message()));
    if (found == 0) return report_usage(fmt::format("runs ls {}: no run log (*{}) there", a.dir, ledger::kRunLogSuffix));
    if (found > 1) return report_usage(fmt::format("runs ls {}: several run logs; name the arena with --arena", a.dir));
  }
  auto rows = ledger::read_run_log(ledger::run_log_path(a.dir, prefix));
  if (!rows) return report_error("runs ls", rows.error());
  // Retention's deletions are in each run's record (the row was written when the run ended).
  const auto deleted_files = [&](const ledger::RunLogRow& r) -> std::uint64_t {
    auto record = ledger::read_run_record(ledger::run_record_path(a.dir, prefix, r.run));
    return record && *record ? (*record)->deleted.size() : 0;
  };
  const auto deleted_text = [&](const ledger::RunLogRow& r) -> std::string {
    const std::uint64_t n = deleted_files(r);
    if (n == 0) return "";
    if (n >= r.files) return "  (wholly deleted by retention)";
    return fmt::format("  (partly deleted by retention: {} of {} files)", n, r.files);
  };
  if (a.json) {
    JsonArray all;
    for (const ledger::RunLogRow& r : *rows) {
      JsonObject row = runctl::row_json(r);
      const std::uint64_t n = deleted_files(r);
      row.number("deleted_files", n).text("retention", n == 0 ? "kept" : n >= r.files ? "wholly deleted" : "partly deleted");
      all.raw(row.str());
    }
    JsonObject o;
    o.text("arena", prefix).raw("runs", all.str());
    print_json(o);
    return kExitOk;
  }
  fmt::print("{:>6}  {:<11} {:<24} {:>8} {:>5} {:>10} {:>10} {:>6}  {}\n", "run", "ended", "start (UTC)", "seconds",
             "files", "written", "recorded", "lost", "title");
  for (const ledger::RunLogRow& r : *rows) {
    const double seconds = r.stop_ns > r.start_ns ? static_cast<double>(r.stop_ns - r.start_ns) / 1e9 : 0.0;
    fmt::print("{:>6}  {:<11} {:<24} {:>8.1f} {:>5} {:>10} {:>10} {:>6}  {}{}{}\n", r.run, r.ended,
               when(r.start_ns), seconds, r.files, r.blocks_written, r.blocks_recorded, r.blocks_lost,
               r.title, r.exact ? "" : "  (NOT exact)", deleted_text(r));
  }
  return kExitOk;
}

}  // namespace

void add_runctl_commands(CLI::App& app, Action& action) {
  CLI::App* ctl = app.add_subcommand("runctl", "Start, stop, abort and show the runs of an arena (controlled runs)");
  ctl->require_subcommand(1);
  for (const char* verb : {"start", "stop", "abort", "status", "enable"}) {
    auto args = std::make_shared<RunctlArgs>();
    args->verb = verb;
    const std::string v = verb;
    const char* help = v == "start"    ? "Start a run; prints its number"
                       : v == "stop"   ? "Stop the run, wait until every recorder closed its files, print its ledger "
                                         "line (exit 5 when it does not balance)"
                       : v == "abort"  ? "Abort the run (its files are kept, its row says aborted); as stop otherwise"
                       : v == "status" ? "Show the run state, its metadata and the recorders taking part"
                                       : "Let the arena take controlled runs, keeping numbers and the run log in DIR";
    CLI::App* sub = ctl->add_subcommand(verb, help);
    add_name_option(*sub, args->where);
    if (v == "enable") sub->add_option("DIR", args->dir, "the run directory (the recorders' --out)")->required();
    if (v == "start") {
      sub->add_option("--title", args->meta.title, "the run's title (/entry/title)");
      sub->add_option("--operator", args->meta.operator_name, "who runs it (/entry/user/name)");
      sub->add_option("--sample", args->meta.sample, "the sample's name (/entry/sample/name)");
      sub->add_option("--comment", args->meta.comment, "a note (/entry/notes/data)");
      sub->add_option("--number", args->number, "this run number (must be above every number used); default: the next")
          ->check(CLI::PositiveNumber);
    }
    if (v == "stop" || v == "abort") {
      sub->add_option("--run", args->number, "only if this run is the one running")->check(CLI::PositiveNumber);
      sub->add_option("--wait-s", args->wait_s, "how long to wait for the recorders to close the run's files")
          ->capture_default_str()
          ->check(CLI::PositiveNumber);
    }
    if (v != "enable") add_json_flag(*sub, args->json);
    bind_action(*sub, action, args, &run_runctl);
  }
  CLI::App* runs = app.add_subcommand("runs", "The runs of a recording directory");
  runs->require_subcommand(1);
  auto ls = std::make_shared<RunsArgs>();
  CLI::App* sub = runs->add_subcommand("ls", "List the run log of a directory: one line per run");
  sub->add_option("DIR", ls->dir, "the recording directory")->required();
  sub->add_option("--arena", ls->arena, "the arena whose run log to list, when the directory holds several");
  add_json_flag(*sub, ls->json);
  bind_action(*sub, action, ls, &run_runs_ls);
}

}  // namespace weir::tools

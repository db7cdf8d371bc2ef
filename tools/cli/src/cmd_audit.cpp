// `weir audit RUN_DIR`: a run's files read alone (no arena needed) and every block of every channel
// accounted for (weir/ledger/audit.hpp): per file its state, per channel written, recorded,
// duplicated, gaps by reason and unaccounted, and the run record's stop, faults and parts.
// Exit 0 when the ledger is exact, 5 (kExitUnaccounted) when a block is duplicated or unaccounted
// or a file cannot be read, 1 when there is no run to audit.
#include <filesystem>
#include <memory>
#include <set>
#include <string>

#include <fmt/format.h>

#include "command.hpp"
#include "weir/h5/recording_format.hpp"
#include "weir/ledger/audit.hpp"
#include "weir/ledger/manifest.hpp"
#include "weir/ledger/run_log.hpp"
#include "weir/ledger/run_record.hpp"
#include "weir/tools/arena_access.hpp"
#include "weir/tools/output.hpp"

namespace weir::tools {
namespace {

struct AuditArgs {
  std::string dir;
  std::uint64_t run = 0;
  std::string arena;
  bool all_runs = false;
  bool verify = false;
  bool json = false;
};

std::string gaps_text(const ledger::ChannelLedger& c) {
  std::string text;
  for (std::size_t r = 0; r < ledger::kReasonCount; ++r)
    if (c.gaps[r] != 0) text += fmt::format("{}{} {}", text.empty() ? "" : ", ", h5::kGapReasonNames[r], c.gaps[r]);
  return text.empty() ? "none" : text;
}

// After a file named NAME.partial: what the name says.
constexpr const char* kNotClosed =
    " (not closed yet: its recorder runs, or was killed; the recorder's next start in this directory names it)";

void print_text(const ledger::Audit& audit, const std::string& dir) {
  fmt::print("run {}{} in {}\n", audit.run, audit.arena.empty() ? "" : fmt::format(" of arena '{}'", audit.arena), dir);
  fmt::print("files: {}\n", audit.files.size());
  for (const ledger::FileState& f : audit.files) {
    if (f.state == "unreadable") {
      fmt::print("  {}: unreadable: {}\n", f.path.string(), f.error);
    } else if (f.state == "deleted") {
      fmt::print("  {}: deleted: {}\n", f.path.string(), f.error);
    } else if (f.state == "swmr-marked") {
      fmt::print("  {}: swmr-marked, {} blocks: run `weir repair {}` so every HDF5 tool opens it{}\n", f.path.string(),
                 f.blocks, f.path.string(), f.partial ? kNotClosed : "");
    } else {
      fmt::print("  {}: {}, {} blocks{}\n", f.path.string(), f.state, f.blocks, f.partial ? kNotClosed : "");
    }
  }
  for (const ledger::ChannelLedger& c : audit.channels) {
    fmt::print("channel {}: written {}, recorded {}, duplicated {}, unaccounted {}, lost {}{}\n", c.channel, c.written,
               c.recorded, c.duplicates, c.unaccounted, ledger::lost_blocks(c),
               c.deleted != 0 ? fmt::format(", in deleted files {}", c.deleted) : "");
    fmt::print("  sequences [{}, {}){}, durable {}\n", c.first, c.end,
               c.incarnations > 1 ? fmt::format(" over {} arena incarnations", c.incarnations) : "", c.durable);
    fmt::print("  gaps: {}{}\n", gaps_text(c), c.tail != 0 ? fmt::format(" (of them {} after the files' last block)", c.tail) : "");
  }
  if (!audit.record) {
    fmt::print("run record: none (the ledger ends at the files' last block)\n");
  } else {
    const ledger::RunRecord& r = *audit.record;
    fmt::print("run record: written by {}{}, started {}, {}\n", r.writer.empty() ? "?" : r.writer,
               r.pipeline.empty() ? "" : fmt::format(" ({})", r.pipeline),
               r.started_ns != 0 ? iso8601_utc(r.started_ns) : "?",
               r.stopped_ns != 0 ? "stopped " + iso8601_utc(r.stopped_ns)
                                 : std::string("not stopped (it still runs, or its writer was killed)"));
    if (!r.fsync.empty() || r.synced_ns != 0)
      fmt::print("  fsync {}, last sync {}\n", r.fsync.empty() ? "?" : r.fsync,
                 r.synced_ns != 0 ? iso8601_utc(r.synced_ns) : "never");
    for (const ledger::Fault& f : r.faults)
      fmt::print("  fault: {}: {} ({}{})\n", f.part, f.what, f.reason,
                 f.error_number != 0 ? fmt::format(", errno {}", f.error_number) : "");
    for (const ledger::PartMark& p : r.parts)
      fmt::print("  part {} ({}{}): {}, {} restarts{}\n", p.name, p.role, p.essential ? ", essential" : "", p.state,
                 p.restarts, p.last_exit.empty() ? "" : ", last exit " + p.last_exit);
  }
  std::uint64_t duplicated = 0, unaccounted = 0, unreadable = 0;
  for (const ledger::ChannelLedger& c : audit.channels) {
    duplicated += c.duplicates;
    unaccounted += c.unaccounted;
  }
  for (const ledger::FileState& f : audit.files) unreadable += f.state == "unreadable" ? 1 : 0;
  if (audit.exact())
    fmt::print("exact: every block is recorded once or in a gap row\n");
  else
    fmt::print("NOT exact: {} duplicated, {} unaccounted, {} unreadable files\n", duplicated, unaccounted, unreadable);
}

void print_json_lines(const ledger::Audit& audit) {
  for (const ledger::ChannelLedger& c : audit.channels) {
    JsonObject gaps;
    for (std::size_t r = 0; r < ledger::kReasonCount; ++r) gaps.number(h5::kGapReasonNames[r], c.gaps[r]);
    print_json(JsonObject()
                   .text("channel", c.channel)
                   .number("written", c.written)
                   .number("recorded", c.recorded)
                   .number("duplicates", c.duplicates)
                   .raw("gaps", gaps.str())
                   .number("unaccounted", c.unaccounted)
                   .number("deleted", c.deleted)
                   .number("lost", ledger::lost_blocks(c))
                   .number("first", c.first)
                   .number("end", c.end)
                   .number("tail", c.tail)
                   .number("durable", c.durable)
                   .number("incarnations", c.incarnations));
  }
  JsonArray files;
  for (const ledger::FileState& f : audit.files) {
    JsonObject file;
    file.text("path", f.path.string()).text("state", f.state).number("segment", f.segment).number("blocks", f.blocks);
    if (f.partial) file.boolean("partial", true);
    if (!f.error.empty()) file.text("error", f.error);
    files.raw(file.str());
  }
  JsonObject last;
  last.number("run", audit.run).text("arena", audit.arena).raw("files", files.str());
  last.boolean("record", audit.record.has_value());
  if (audit.record) last.number("stopped_ns", audit.record->stopped_ns).number("faults", audit.record->faults.size());
  print_json(last.boolean("exact", audit.exact()));
}

// --all-runs: every run of the arena in the directory, one line each, and the blocks between runs
// (controlled runs): in no run, lost by none.
int run_audit_all(const AuditArgs& args) {
  std::string prefix = args.arena;
  if (prefix.empty()) {  // the only arena whose run records are there
    std::set<std::string> arenas;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(args.dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      const std::size_t at = name.rfind("_run");
      if (at != std::string::npos && at > 0 && name.ends_with(ledger::kRunRecordSuffix)) arenas.insert(name.substr(0, at));
    }
    if (arenas.size() != 1)
      return report_usage(fmt::format("audit --all-runs {}: {} arenas' runs there; name one with --arena", args.dir,
                                      arenas.size()));
    prefix = *arenas.begin();
  }
  const std::vector<std::uint64_t> runs = ledger::recorded_runs(args.dir, prefix);
  if (runs.empty()) return report_usage(fmt::format("audit --all-runs: no run of '{}' in {}", prefix, args.dir));
  bool exact = true;
  for (const std::uint64_t run : runs) {
    auto audit = ledger::audit_run(args.dir, ledger::AuditOptions{run, prefix});
    if (!audit) {
      print_error(fmt::format("run {}: {}", run, audit.error().what));
      exact = false;
      continue;
    }
    std::uint64_t written = 0, recorded = 0, lost = 0;
    for (const ledger::ChannelLedger& c : audit->channels) {
      written += c.written;
      recorded += c.recorded;
      lost += ledger::lost_blocks(c);
    }
    exact = exact && audit->exact();
    if (args.json)
      print_json(JsonObject()
                     .number("run", run)
                     .number("files", audit->files.size())
                     .number("written", written)
                     .number("recorded", recorded)
                     .number("lost", lost)
                     .boolean("exact", audit->exact()));
    else
      fmt::print("run {}: {} file(s), {} blocks written, {} recorded, {} lost, {}\n", run, audit->files.size(), written,
                 recorded, lost, audit->exact() ? "exact" : "NOT exact");
  }
  auto between = ledger::between_runs(args.dir, prefix);
  if (!between) {
    print_error(between.error().what);
    return kExitUnaccounted;
  }
  for (const ledger::BetweenRuns& b : *between) {
    if (args.json)
      print_json(JsonObject()
                     .text("channel", b.channel)
                     .number("between_runs", b.blocks())
                     .number("after_run", b.after_run)
                     .number("before_run", b.before_run)
                     .number("first", b.first)
                     .number("end", b.end));
    else
      fmt::print("  {}: {} block(s) between runs {} and {} (sequences {}..{}): in no run, not lost\n", b.channel,
                 b.blocks(), b.after_run, b.before_run, b.first, b.end - 1);
  }
  return exact ? kExitOk : kExitUnaccounted;
}

int run_audit(const AuditArgs& args) {
  if (args.all_runs) return run_audit_all(args);
  ledger::AuditOptions options;
  options.run = args.run;
  options.arena = args.arena;
  auto audit = ledger::audit_run(args.dir, options);
  if (!audit) {
    print_error(audit.error().what);
    return kExitError;
  }
  if (args.json)
    print_json_lines(*audit);
  else
    print_text(*audit, args.dir);
  const int ledger_exit = audit->exact() ? kExitOk : kExitUnaccounted;
  if (!args.verify) return ledger_exit;
  // --verify: every file of the run against its manifest; each one that is not as it says named.
  const ledger::Verification checked = ledger::verify_run(args.dir, *audit);
  std::uint64_t bad = 0;
  for (const ledger::FileCheck& f : checked.files) {
    const bool fine = f.state == "ok" || f.state == "open" || f.state == "deleted";
    bad += fine ? 0 : 1;
    if (args.json)
      print_json(JsonObject().text("verify", f.path.string()).text("state", f.state).text("detail", f.detail));
    else if (!fine || f.state == "open" || f.state == "deleted")
      fmt::print("verify: {} {}{}\n", f.state, f.path.string(), f.detail.empty() ? "" : ": " + f.detail);
  }
  if (args.json)
    print_json(JsonObject().number("verified", checked.files.size()).number("bad", bad).number("bytes", checked.bytes_hashed).boolean("ok", checked.ok()));
  else
    fmt::print("verify: {} file(s), {} bytes hashed, {}\n", checked.files.size(), checked.bytes_hashed,
               checked.ok() ? "every one as its manifest says" : fmt::format("{} NOT as their manifests say", bad));
  if (ledger_exit != kExitOk) return ledger_exit;
  return checked.ok() ? kExitOk : kExitNotVerified;
}

}  // namespace

void add_audit_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<AuditArgs>();
  CLI::App* sub = app.add_subcommand(
      "audit", "Account for every block of a recorded run from its files alone: per channel written, recorded, "
               "duplicated, gaps by reason and unaccounted; per file closed, repaired or SWMR-marked. Exit 5 when "
               "a block is duplicated or unaccounted, or a file cannot be read");
  sub->add_option("RUN_DIR", args->dir, "the run's directory (--out DIR), or FILE.h5 of a --out FILE.h5 series")
      ->required();
  sub->add_option("--run", args->run, "the run to audit (default: the only one there)")->check(CLI::PositiveNumber);
  sub->add_option("--arena", args->arena, "the arena whose run to audit (default: the only one there)");
  sub->add_flag("--all-runs", args->all_runs,
                "every run of the arena (--arena) in the directory, a line each, then the blocks published between "
                "runs (controlled runs): in no run and lost by none");
  sub->add_flag("--verify", args->verify,
                "also recompute each file's SHA-256 against its manifest (FILE.sha256) and name every file that "
                "changed, is missing, or is closed without a manifest; exit 6 when one is (5 wins)");
  sub->add_flag("--json", args->json,
                "print one JSON object per line per channel, then one for the run ({\"run\", \"files\", \"exact\"})");
  bind_action(*sub, action, args, &run_audit);
}

}  // namespace weir::tools

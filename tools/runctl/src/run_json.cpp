#include "weir/runctl/run_json.hpp"

#include "weir/core/clock.hpp"
#include "weir/tools/output.hpp"

namespace weir::runctl {

namespace {

std::string when(std::int64_t ns) { return ns > 0 ? tools::iso8601_utc(static_cast<std::uint64_t>(ns)) : ""; }

}  // namespace

json::JsonObject status_json(const core::RunStatus& s, const std::vector<core::RunRecorderSeen>& recorders) {
  json::JsonArray rows;
  for (const core::RunRecorderSeen& r : recorders)
    rows.raw(json::JsonObject()
                 .number("pid", r.pid)
                 .boolean("alive", r.alive)
                 .number("open_run", r.open_run)
                 .number("closed_run", r.closed_run)
                 .number("first_block_ns", r.first_block_ns)
                 .number("closed_ns", r.closed_ns)
                 .str());
  json::JsonObject o;
  o.text("state", core::run_state_name(s.state))
      .number("run", s.number)
      .number("highest", s.highest)
      .number("start_ns", s.start_ns)
      .number("stop_ns", s.stop_ns);
  if (s.state == core::RunState::running)
    o.real("elapsed_s", static_cast<double>(core::realtime_ns() - s.start_ns) / 1e9);
  else
    o.raw("elapsed_s", "null");
  o.text("ended", core::run_end_name(s.ended))
      .text("door", s.door)
      .text("title", s.meta.title)
      .text("operator", s.meta.operator_name)
      .text("sample", s.meta.sample)
      .text("comment", s.meta.comment)
      .number("transitions", s.transitions)
      .text("dir", s.dir)
      .boolean("enabled", !s.dir.empty())
      .raw("recorders", rows.str());
  return o;
}

json::JsonObject row_json(const ledger::RunLogRow& r) {
  json::JsonObject o;
  o.number("run", r.run)
      .number("start_ns", r.start_ns)
      .number("stop_ns", r.stop_ns)
      .text("start", when(r.start_ns))
      .text("stop", when(r.stop_ns))
      .text("title", r.title)
      .text("operator", r.operator_name)
      .text("sample", r.sample)
      .number("files", r.files)
      .number("blocks_written", r.blocks_written)
      .number("blocks_recorded", r.blocks_recorded)
      .number("blocks_lost", r.blocks_lost)
      .boolean("exact", r.exact)
      .text("ended", r.ended)
      .text("door", r.door)
      .text("note", r.note);
  return o;
}

}  // namespace weir::runctl

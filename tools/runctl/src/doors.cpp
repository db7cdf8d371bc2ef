#include "weir/runctl/doors.hpp"

#include <algorithm>
#include <system_error>

#include "weir/core/clock.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/ledger/run_record.hpp"

namespace weir::runctl {

namespace {

constexpr std::int64_t kRecorderLookNs = 50'000'000;  // a stop looks at the recorder rows at least this often

std::string prefix_of(const core::Arena& arena) { return arena.location().name; }

core::Result<std::filesystem::path> run_dir(const core::Arena& arena, const core::RunStatus& s) {
  if (s.dir.empty())
    return core::fail(core::Errc::conflict,
                      "arena '" + arena.location().name +
                          "' does not take controlled runs: no run directory is set (a pipeline with runs = "
                          "\"controlled\" under weir run sets it, or weir runctl enable ARENA DIR)");
  return std::filesystem::path(s.dir);
}

ledger::RunLogRow row_of(const core::RunStatus& s, std::uint64_t run) {
  ledger::RunLogRow row;
  row.run = run;
  row.start_ns = s.start_ns;
  row.title = s.meta.title;
  row.operator_name = s.meta.operator_name;
  row.sample = s.meta.sample;
  row.door = s.door;
  return row;
}

// Whether the run's record (when the run has one) says every channel's ledger ends at the run's stop.
bool record_final(const std::filesystem::path& dir, const std::string& prefix, std::uint64_t run) {
  auto r = ledger::read_run_record(ledger::run_record_path(dir, prefix, run));
  if (!r || !r->has_value()) return true;  // no recorder wrote anything of it
  const auto& marks = (*r)->channels;
  return std::all_of(marks.begin(), marks.end(), [](const ledger::ChannelMark& m) { return m.final; });
}

}  // namespace

core::Result<void> enable(const core::Arena& arena, const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return core::fail(core::Errc::io_error, "run directory " + dir.string() + ": " + ec.message());
  const std::filesystem::path absolute = std::filesystem::weakly_canonical(dir, ec);
  core::RunControl rc(arena);
  return rc.set_dir(ec ? dir.string() : absolute.string());
}

core::Result<core::RunStatus> start_run(const core::Arena& arena, const core::RunMeta& meta, std::string_view door,
                                        std::uint64_t wanted) {
  core::RunControl rc(arena);
  const core::RunStatus now = rc.status();
  auto dir = run_dir(arena, now);
  if (!dir) return tl::make_unexpected(dir.error());
  const std::string prefix = prefix_of(arena);
  // Under the arena's transition lock: the number is persisted and the run's row written before any
  // process can see the run running.
  return rc.start(meta, door, [&](std::uint64_t highest) -> core::Result<std::uint64_t> {
    auto number = ledger::allocate_run_number(*dir, prefix, wanted, highest);
    if (!number) return number;
    ledger::RunLogRow row;
    row.run = *number;
    row.start_ns = core::realtime_ns();
    row.title = meta.title;
    row.operator_name = meta.operator_name;
    row.sample = meta.sample;
    row.ended = ledger::kRunning;
    row.door = std::string(door);
    if (auto ok = ledger::add_run_log_row(ledger::run_log_path(*dir, prefix), row); !ok)
      return tl::make_unexpected(ok.error());
    return number;
  });
}

core::Result<Stopped> stop_run(const core::Arena& arena, std::string_view door, core::RunEnd how, std::uint64_t expect,
                               std::int64_t wait_ns, std::int64_t at_ns) {
  core::RunControl rc(arena);
  auto stopped = rc.stop(door, how, expect, at_ns);
  if (!stopped) return tl::make_unexpected(stopped.error());
  return close_run(arena, *stopped, wait_ns);
}

core::Result<Stopped> close_run(const core::Arena& arena, const core::RunStatus& ended, std::int64_t wait_ns) {
  core::RunControl rc(arena);
  auto dir = run_dir(arena, ended);
  if (!dir) return tl::make_unexpected(dir.error());
  Stopped out;
  out.status = ended;
  const std::uint64_t run = ended.number;
  const std::int64_t deadline = core::monotonic_ns() + wait_ns;
  const std::string prefix = prefix_of(arena);
  bool unfinished = false;
  for (;;) {
    out.late.clear();
    for (const core::RunRecorderSeen& r : rc.recorders())
      if (r.alive && r.closed_run < run) out.late.push_back(r.pid);
    unfinished = !record_final(*dir, prefix, run);  // a recorder restarting after a fault finishes it
    const std::int64_t left = deadline - core::monotonic_ns();
    if ((out.late.empty() && !unfinished) || left <= 0) break;
    (void)rc.wait(rc.changes(), std::min(left, kRecorderLookNs));  // a recorder that closes rings it
  }
  out.closed = out.late.empty() && !unfinished;
  ledger::RunLogRow row = row_of(ended, run);
  row.stop_ns = ended.stop_ns;
  row.ended = std::string(core::run_end_name(ended.ended));
  if (!out.late.empty()) row.note = std::to_string(out.late.size()) + " recorder(s) had not closed the run's files";
  if (unfinished)
    row.note += std::string(row.note.empty() ? "" : "; ") + "no recorder finished the run's ledger (its record is not final)";
  if (auto ok = ledger::fill_from_audit(*dir, prefix, row); !ok) {
    row.exact = false;
    row.note += (row.note.empty() ? "" : "; ") + ok.error().what;
  }
  auto added = ledger::add_run_log_row(ledger::run_log_path(*dir, prefix), row);
  if (!added) return tl::make_unexpected(added.error());
  if (!*added) {  // another door closed it first: its row stands
    auto rows = ledger::read_run_log(ledger::run_log_path(*dir, prefix));
    if (rows)
      for (const ledger::RunLogRow& r : *rows)
        if (r.run == run) row = r;
  }
  publish_closed(arena, run, row.exact);
  out.row = std::move(row);
  return out;
}

void publish_closed(const core::Arena& arena, std::uint64_t run, bool exact) noexcept {
  core::KvStore kv(arena);
  const std::uint64_t verdict = exact ? 1U : 0U;
  (void)kv.set(kClosedExactKey, std::as_bytes(std::span{&verdict, 1}), core::ValueType::u64);
  (void)kv.set(kClosedRunKey, std::as_bytes(std::span{&run, 1}), core::ValueType::u64);
}

core::Result<std::vector<std::uint64_t>> close_interrupted(const std::filesystem::path& dir, std::string_view prefix,
                                                           std::uint64_t running_now, const std::string& note) {
  const std::filesystem::path log = ledger::run_log_path(dir, prefix);
  auto rows = ledger::read_run_log(log);
  if (!rows) return tl::make_unexpected(rows.error());
  std::vector<std::uint64_t> closed;
  for (ledger::RunLogRow row : *rows) {
    if (row.ended != ledger::kRunning || row.run == running_now) continue;
    row.ended = std::string(core::run_end_name(core::RunEnd::interrupted));
    row.door = "restart";
    row.note = note;
    if (auto ok = ledger::fill_from_audit(dir, prefix, row); !ok) {
      row.exact = false;
      row.note += "; " + ok.error().what;
    }
    auto added = ledger::add_run_log_row(log, row);
    if (!added) return tl::make_unexpected(added.error());
    if (*added) closed.push_back(row.run);
  }
  return closed;
}

std::string ledger_line(const ledger::RunLogRow& row) {
  std::string line = "run " + std::to_string(row.run) + " " + row.ended + ": " + std::to_string(row.files) + " file" +
                     (row.files == 1 ? "" : "s") + ", " + std::to_string(row.blocks_written) + " blocks written, " +
                     std::to_string(row.blocks_recorded) + " recorded, " + std::to_string(row.blocks_lost) + " lost (" +
                     (row.exact ? "exact" : "NOT exact") + ")";
  if (!row.note.empty()) line += "; " + row.note;
  return line;
}

}  // namespace weir::runctl

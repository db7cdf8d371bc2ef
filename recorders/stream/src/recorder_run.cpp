// Controlled runs (docs/design/runs.md): the recorder records only inside the arena's runs. Per run,
// a Recorder registers on each channel at the first block in its ring that begins at or after the
// run's start (run_boundary), skips later blocks that still begin before it, records those that begin
// before the stop, and closes at the first block of each channel that begins at or after it.
// record_runs() waits between runs, costing nothing.
#include <hdf5.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <optional>

#include "process_info.hpp"
#include "recorder_state.hpp"
#include "weir/core/clock.hpp"
#include "weir/h5/attribute.hpp"
#include "weir/ledger/run_record.hpp"

namespace weir::rec {

namespace {

constexpr std::int64_t kRunStopWaitNs = 500'000'000;  // after a stop: how long a channel may publish nothing past it
constexpr double kBlockPeriodsAtStop = 2;            // ... or this many of its block periods, if longer
constexpr std::size_t kKeyTextBytes = 4096;          // a key's value at start, as text, at most

}  // namespace

bool Recorder::before_run(Follow& f, const core::BlockView& view) {
  if (static_cast<std::int64_t>(view.realtime_ns) < options_.run_start_ns) {
    (void)f.reader.done(view);  // before the run: not its block, not a loss
    f.first_sequence = view.sequence + 1;
    return true;
  }
  f.awaiting_start = false;
  f.first_sequence = view.sequence;
  marks_due_ = true;
  return false;
}

bool Recorder::past_run(Follow& f, const core::BlockView& view) {
  if (run_stop_ns_ == 0 || static_cast<std::int64_t>(view.realtime_ns) < run_stop_ns_) return false;
  f.run_done = true;  // left unread: the run's ledger ends before it
  f.stop_head = view.sequence;
  if (f.awaiting_start) {  // no block of it began inside the run
    f.awaiting_start = false;
    f.first_sequence = view.sequence;
  }
  return true;
}

void Recorder::watch_run() {
  if (run_stop_ns_ != 0 || !run_control_) return;
  const std::uint32_t changes = run_control_->changes();
  if (changes == run_changes_ && run_looked_) return;
  run_changes_ = changes;
  run_looked_ = true;
  const core::RunStatus s = run_control_->status();
  if (s.state == core::RunState::running && s.number == run_) return;
  // Stopped, or stopped and another run started: stop_ns is the last stop, this run's.
  run_stop_ns_ = s.stop_ns != 0 ? s.stop_ns : core::realtime_ns();
  double longest_period_s = 0;
  for (const Follow& f : follows_)
    if (f.info.rate_hz > 0) longest_period_s = std::max(longest_period_s, f.info.samples_per_block / f.info.rate_hz);
  const auto periods = static_cast<std::int64_t>(std::llround(kBlockPeriodsAtStop * longest_period_s * 1e9));
  // A stop set ahead (a Kafka stop time) counts from that time, not from now.
  const std::int64_t ahead = std::max<std::int64_t>(0, run_stop_ns_ - core::realtime_ns());
  run_stop_deadline_ = core::monotonic_ns() + ahead + std::max(kRunStopWaitNs, periods);
  notice("run " + std::to_string(run_) + " stopped at " + h5::iso8601_ns(static_cast<std::uint64_t>(run_stop_ns_)) +
         ": recording the blocks that begin before it");
}

bool Recorder::run_finished() const noexcept {
  if (run_stop_ns_ == 0) return false;
  return core::monotonic_ns() >= run_stop_deadline_ ||
         std::all_of(follows_.begin(), follows_.end(), [](const Follow& f) { return f.run_done; });
}

void Recorder::finish_run() {
  for (Follow& f : follows_) {
    if (f.run_done) continue;
    f.run_done = true;  // nothing past the stop came in time: the run ends where this channel was read to
    f.stop_head = f.reader.cursor();
    if (f.awaiting_start) {
      f.awaiting_start = false;
      f.first_sequence = f.stop_head;
    }
  }
  if (auto ok = log_carried(); !ok) return stop_on_error(ok.error());
  close_last_segment();
}

namespace {

// A key's value as text for the run's record of every key at start: numbers in full, text as it is,
// arrays and bytes described.
std::string value_text(const core::ValueInfo& info, std::span<const std::byte> bytes) {
  std::uint64_t word = 0;
  std::memcpy(&word, bytes.data(), std::min(sizeof word, bytes.size()));
  char text[40];
  std::to_chars_result put{text, {}};
  switch (info.type) {
    case core::ValueType::i64: put = std::to_chars(text, text + sizeof text, std::bit_cast<std::int64_t>(word)); break;
    case core::ValueType::u64: put = std::to_chars(text, text + sizeof text, word); break;
    case core::ValueType::f64: put = std::to_chars(text, text + sizeof text, std::bit_cast<double>(word)); break;
    case core::ValueType::text: return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    case core::ValueType::none: return "";
    default: return "(" + std::to_string(bytes.size()) + " bytes of " + core::value_type_name(info.type) + ")";
  }
  return std::string(text, put.ptr);
}

// What a controlled run writes into each of its files: its number as the entry's identifier, the
// title, the operator (NXuser), the sample (NXsample), the comment (NXnote), and the run's own group
// with its start, its door, the pipeline in force and every key's value at start.
void add_run_nexus(RecordOptions& o, const core::RunStatus& s, const core::Arena& arena) {
  if (!s.meta.title.empty()) o.nexus.title = s.meta.title;
  o.nexus.texts.emplace_back("entry_identifier", std::to_string(s.number));
  o.nexus.groups.push_back(NexusGroup{"user", "", "NXuser", {{"name", s.meta.operator_name}}, {}});
  o.nexus.groups.push_back(NexusGroup{"sample", "", "NXsample", {{"name", s.meta.sample}}, {}});
  o.nexus.groups.push_back(
      NexusGroup{"notes", "", "NXnote", {{"type", "text/plain"}, {"description", "operator's comment"}, {"data", s.meta.comment}}, {}});
  o.nexus.groups.push_back(NexusGroup{"run_control", "", "NXcollection",
                                      {{"number", std::to_string(s.number)},
                                       {"start_time", h5::iso8601_ns(static_cast<std::uint64_t>(s.start_ns))},
                                       {"started_by", s.door},
                                       {"pipeline_at_start", o.pipeline_text}},
                                      {}});
  NexusGroup keys{"keys_at_start", "run_control", "NXcollection", {}, {}};
  core::KvStore kv(arena);
  std::vector<std::byte> buffer(std::max<std::size_t>(kv.value_bytes(), kKeyTextBytes));
  kv.for_each_key([&](std::string_view key, const core::ValueInfo&) {
    core::ValueInfo info;
    if (kv.get(key, buffer, info) != core::KvStatus::ok) return;
    keys.table.emplace_back(std::string(key), value_text(info, std::span(buffer.data(), std::min<std::size_t>(info.length, buffer.size()))));
  });
  o.nexus.groups.push_back(std::move(keys));
}

std::optional<ledger::RunRecord> record_of(const RecordOptions& o, const core::Arena& arena, std::uint64_t run) {
  const OutTarget target = parse_out(o.out);
  auto r = ledger::read_run_record(ledger::run_record_path(target.dir, target.is_dir ? arena.location().name : target.stem, run));
  if (!r || !r->has_value()) return std::nullopt;
  return std::move(**r);
}

// The run was recorded and closed before (its record says it stopped at the run's end): never
// written again.
bool run_closed_before(const RecordOptions& o, const core::Arena& arena, std::uint64_t run) {
  const auto r = record_of(o, arena, run);
  return r && r->stopped_ns != 0 && std::all_of(r->channels.begin(), r->channels.end(),
                                                [](const ledger::ChannelMark& m) { return m.final; });
}

// The run this recorder's files hold that ended while no recorder of them ran (it stopped on a fault
// and was restarted after the run's stop): its ledger still has to be finished up to the stop.
bool run_unfinished(const RecordOptions& o, const core::Arena& arena, std::uint64_t run) {
  const auto r = record_of(o, arena, run);
  return r && !r->channels.empty() &&
         !std::all_of(r->channels.begin(), r->channels.end(), [](const ledger::ChannelMark& m) { return m.final; });
}

}  // namespace

core::Result<RunsSummary> record_runs(const core::Arena& arena, const RecordOptions& options, RecordControl& control) {
  (void)H5dont_atexit();
  if (auto ok = check_options(options); !ok) return tl::make_unexpected(ok.error());
  core::RunControl rc(arena);
  auto row = rc.join_recorder();
  if (!row) return tl::make_unexpected(row.error());
  struct Leave {
    core::RunControl& rc;
    std::uint32_t row;
    ~Leave() { rc.leave_recorder(row); }
  } leave{rc, *row};
  const auto say = [&control](const std::string& line) {
    if (control.notice) control.notice(line);
  };
  RunsSummary out;
  std::uint64_t done = 0;  // the last run this process closed or refused
  bool waiting = false;
  control.started.store(true, std::memory_order_release);  // nothing to wait for before a run starts
  while (!control.stop.load(std::memory_order_relaxed)) {
    const core::RunStatus s = rc.status();
    // The last run ended while no recorder of these files ran (this one is a restart after a fault):
    // finish its ledger up to its stop, from its files' end.
    const bool finish = s.state != core::RunState::running && s.number > done && run_unfinished(options, arena, s.number);
    if (s.state != core::RunState::running && s.number > done && !finish) {  // ended before this recorder took part
      rc.recorder_closed(*row, s.number);                                     // nothing of it is open here
      done = s.number;
    }
    if (!finish && (s.state != core::RunState::running || s.number == done)) {
      if (!waiting) say("waiting for a run to start (weir runctl start " + arena.location().name + ")");
      waiting = true;
      (void)rc.wait(s.changes, kWaitSliceNs);  // a futex: no CPU between runs; slices to see a stop
      continue;
    }
    waiting = false;
    if (run_closed_before(options, arena, s.number)) {
      say("run " + std::to_string(s.number) + " was recorded and closed before: its files are not written again");
      rc.recorder_closed(*row, s.number);
      done = s.number;
      continue;
    }
    RecordOptions o = options;
    o.controlled = true;
    o.run = s.number;
    o.run_start_ns = s.start_ns;
    o.run_row = *row;
    o.duration_s = 0;
    add_run_nexus(o, s, arena);
    say("run " + std::to_string(s.number) + (finish ? " ended while no recorder ran: finishing its ledger"
                                                    : " started" + (s.meta.title.empty() ? "" : " (" + s.meta.title + ")")));
    auto r = record(arena, o, control);
    if (!r) return tl::make_unexpected(r.error());
    out.last = std::move(*r);
    if (out.last.stopped_by == "run stop") {
      rc.recorder_closed(*row, s.number);
      ++out.runs;
      done = s.number;
      continue;
    }
    out.error = out.last.stopped_by == "error";
    break;  // a write failure, or a stop of the recorder itself: the run goes on without it
  }
  return out;
}

}  // namespace weir::rec

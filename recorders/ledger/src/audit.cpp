// audit_run: a run's files found by name, each read tolerantly (weir/h5/segment_tables.hpp), the
// run record beside them read, and every channel's evidence swept into its ledger.
#include "weir/ledger/audit.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "ledger_sweep.hpp"
#include "run_files.hpp"
#include "weir/core/arena_layout.hpp"
#include "weir/h5/recording_format.hpp"
#include "weir/h5/segment_tables.hpp"

namespace weir::ledger {

static_assert(kReasonCount == h5::kGapReasonCount, "a ledger counts every gap reason of the format");

namespace {

using detail::Evidence;
using detail::RunFile;

constexpr auto kDroppedAtSource = static_cast<std::uint32_t>(h5::GapReason::dropped_at_source);
constexpr auto kRestart = static_cast<std::size_t>(h5::GapReason::recorder_restart);

std::string run_name(const std::string& arena, std::uint64_t run) {
  std::string number = std::to_string(run);
  if (number.size() < 6) number.insert(0, 6 - number.size(), '0');
  return (arena.empty() ? std::string() : arena + "_") + "run" + number;
}

// One channel's evidence, by arena incarnation (arena_created_ns), in order of first appearance.
struct ChannelEvidence {
  std::string name;
  std::map<std::uint64_t, Evidence> incarnations;
  std::map<std::uint64_t, std::vector<detail::Reach>> reaches;  // per incarnation: each remaining file's reach
};

ChannelEvidence& evidence_of(std::vector<ChannelEvidence>& all, const std::string& name) {
  const auto it = std::find_if(all.begin(), all.end(), [&](const ChannelEvidence& c) { return c.name == name; });
  if (it != all.end()) return *it;
  all.push_back(ChannelEvidence{name, {}, {}});
  return all.back();
}

void add_file(const h5::SegmentTables& file, std::uint64_t segment, std::uint64_t synced_ns, std::vector<ChannelEvidence>& all) {
  const bool durable = synced_ns != 0 && file.stop_ns != 0 && file.stop_ns <= synced_ns;
  for (const h5::SegmentChannel& c : file.channels) {
    ChannelEvidence& ce = evidence_of(all, c.name);
    Evidence& e = ce.incarnations[file.arena_created_ns];
    const std::size_t spans_before = e.spans.size();
    detail::add_blocks(c.sequence, c.flags, e.spans);
    if (durable)
      e.durable += static_cast<std::uint64_t>(std::count_if(
          c.flags.begin(), c.flags.end(), [](std::uint32_t f) { return (f & core::kBlockGapFlag) == 0; }));
    for (const h5::SegmentGap& g : c.gaps) {
      if (g.reason >= kReasonCount) continue;  // a reason this build does not know accounts for nothing
      if (g.reason == kDroppedAtSource) {
        e.dropped_at_source += g.blocks;
      } else if (g.sequence + g.blocks >= g.sequence) {
        e.spans.push_back(detail::Span{g.sequence, g.sequence + g.blocks, static_cast<std::uint8_t>(g.reason)});
      }
    }
    detail::Reach reach{segment, UINT64_MAX, 0};
    for (std::size_t i = spans_before; i < e.spans.size(); ++i) {
      reach.lo = std::min(reach.lo, e.spans[i].lo);
      reach.hi = std::max(reach.hi, e.spans[i].hi);
    }
    if (reach.hi > reach.lo) ce.reaches[file.arena_created_ns].push_back(reach);
  }
}

// The stretches the run's deleted files held, as spans of their own kind, before the sweep.
void add_deleted(ChannelEvidence& c, const std::vector<std::uint64_t>& deleted_segments) {
  if (deleted_segments.empty()) return;
  for (auto& [incarnation, e] : c.incarnations) {
    std::uint64_t lo = UINT64_MAX, hi = 0;
    for (const detail::Span& s : e.spans) {
      lo = std::min(lo, s.lo);
      hi = std::max(hi, s.hi);
    }
    const std::uint64_t first = e.first.value_or(lo == UINT64_MAX ? 0 : lo);
    const std::uint64_t end = std::max(e.written.value_or(0), hi);
    const auto it = c.reaches.find(incarnation);
    auto holes = detail::deleted_spans(it != c.reaches.end() ? it->second : std::vector<detail::Reach>{}, deleted_segments,
                                       std::min(first, lo), end);
    e.spans.insert(e.spans.end(), holes.begin(), holes.end());
  }
}

// The record's marks: each channel's first and written, on the incarnation it names (the record's,
// else the latest one its files come from).
void add_record(const RunRecord& record, std::vector<ChannelEvidence>& all) {
  for (const ChannelMark& mark : record.channels) {
    ChannelEvidence& c = evidence_of(all, mark.channel);
    std::uint64_t incarnation = mark.arena_created_ns != 0 ? mark.arena_created_ns : record.arena_created_ns;
    if (incarnation == 0 && !c.incarnations.empty()) incarnation = c.incarnations.rbegin()->first;
    Evidence& e = c.incarnations[incarnation];
    e.first = mark.first_sequence;
    e.written = mark.written;
  }
}

// The reason of the record's tail: the last fault's, else recorder_down.
std::uint8_t tail_reason(const std::optional<RunRecord>& record) {
  const Fault* last = nullptr;
  if (record)
    for (const Fault& f : record->faults)
      if (last == nullptr || f.realtime_ns >= last->realtime_ns) last = &f;
  if (last == nullptr) return static_cast<std::uint8_t>(h5::GapReason::recorder_down);
  const auto known = std::find(h5::kGapReasonNames.begin(), h5::kGapReasonNames.end(), last->reason);
  return known != h5::kGapReasonNames.end() ? static_cast<std::uint8_t>(known - h5::kGapReasonNames.begin())
                                            : static_cast<std::uint8_t>(h5::GapReason::disk_error);
}

std::string file_state(const h5::SegmentTables& t) {
  if (t.swmr_marked) return "swmr-marked";
  return t.stopped ? "closed" : "repaired";
}

// Picks the run: the one asked for, or the only one there. Fails naming the place.
core::Result<std::pair<std::string, std::uint64_t>> choose_run(const std::vector<RunFile>& files,
                                                               const std::filesystem::path& where,
                                                               const AuditOptions& options) {
  std::set<std::pair<std::string, std::uint64_t>> runs;
  for (const RunFile& f : files)
    if (f.run_known && (options.run == 0 || f.run == options.run) && (options.arena.empty() || f.arena.empty() || f.arena == options.arena))
      runs.emplace(f.arena, f.run);
  if (runs.empty()) {
    std::string which;
    if (options.run != 0) which += " of run " + std::to_string(options.run);
    if (!options.arena.empty()) which += " of arena '" + options.arena + "'";
    return core::fail(core::Errc::not_found, "audit: no recording" + which + " in " + where.string());
  }
  if (runs.size() > 1) {
    std::string names;
    for (const auto& [arena, run] : runs) names += (names.empty() ? "" : ", ") + run_name(arena, run);
    return core::fail(core::Errc::invalid_argument, "audit: " + where.string() + " holds several runs (" + names +
                                                        "): choose one with --run N (and --arena A)");
  }
  return *runs.begin();
}

}  // namespace

bool Audit::exact() const noexcept {
  for (const FileState& f : files)
    if (f.state == "unreadable") return false;
  for (const ChannelLedger& c : channels)
    if (c.duplicates != 0 || c.unaccounted != 0) return false;
  return true;
}

std::uint64_t lost_blocks(const ChannelLedger& ledger) noexcept {
  std::uint64_t lost = ledger.unaccounted;
  for (std::size_t r = 0; r < kReasonCount; ++r)
    if (r != kRestart) lost += ledger.gaps[r];
  return lost;
}

core::Result<Audit> audit_run(const std::filesystem::path& where, const AuditOptions& options) {
  const detail::RunPlace place = detail::run_place(where);
  std::vector<RunFile> found = detail::list_run_files(place);
  // FILE form: each recording's run is its `run` attribute, so every file is read first.
  std::map<std::filesystem::path, core::Result<h5::SegmentTables>> read;
  if (place.file_form)
    for (RunFile& f : found) {
      if (f.record) continue;
      auto tables = h5::read_segment_tables(f.path.string());
      if (tables) {
        f.run = tables->run;
        f.run_known = true;
      }
      read.emplace(f.path, std::move(tables));
    }
  auto chosen = choose_run(found, where, options);
  if (!chosen) return tl::make_unexpected(chosen.error());

  Audit audit;
  audit.arena = chosen->first;
  audit.run = chosen->second;
  std::vector<ChannelEvidence> evidence;
  const std::string prefix = place.file_form ? place.stem : chosen->first;
  auto record = read_run_record(run_record_path(place.dir, prefix, audit.run));
  if (!record) return tl::make_unexpected(core::with_context(record.error(), "audit"));
  audit.record = std::move(*record);
  const std::uint64_t synced_ns = audit.record ? audit.record->synced_ns : 0;

  for (const RunFile& f : found) {
    if (f.record || f.arena != chosen->first) continue;
    // An unreadable FILE-form file has no run to tell: it counts against every run there.
    if (f.run_known && f.run != audit.run) continue;
    const auto it = read.find(f.path);
    auto tables = it != read.end() ? std::move(it->second) : h5::read_segment_tables(f.path.string());
    FileState state;
    state.path = f.path;
    state.segment = f.segment;
    state.partial = f.partial;
    if (!tables) {
      state.state = "unreadable";
      state.error = tables.error().what;
    } else {
      state.state = file_state(*tables);
      for (const h5::SegmentChannel& c : tables->channels) state.blocks += c.sequence.size();
      if (audit.arena.empty()) audit.arena = tables->arena;
      add_file(*tables, f.segment, synced_ns, evidence);
    }
    audit.files.push_back(std::move(state));
  }
  if (audit.record) {
    add_record(*audit.record, evidence);
    if (audit.arena.empty()) audit.arena = audit.record->arena;
  }
  // Files retention deleted (the record says so, and they are gone): named, and what they held accounted.
  std::vector<std::uint64_t> deleted_segments;
  if (audit.record) {
    for (const DeletedFile& d : audit.record->deleted) {
      const std::filesystem::path path = place.dir / d.file;
      std::error_code ec;
      if (std::filesystem::exists(path, ec)) continue;  // its deletion was recorded, then did not happen
      deleted_segments.push_back(d.segment);
      FileState state;
      state.path = path;
      state.segment = d.segment;
      state.state = "deleted";
      state.error = "deleted by retention (" + d.reason + ", " + std::to_string(d.bytes) + " bytes" +
                    (d.sha256.empty() ? std::string() : ", sha256 " + d.sha256) + ")";
      audit.files.push_back(std::move(state));
    }
    std::stable_sort(audit.files.begin(), audit.files.end(),
                     [](const FileState& a, const FileState& b) { return a.segment < b.segment; });
  }
  const std::uint8_t tail = tail_reason(audit.record);
  for (ChannelEvidence& c : evidence) {
    add_deleted(c, deleted_segments);
    ChannelLedger total;
    total.channel = c.name;
    for (auto& [incarnation, e] : c.incarnations) detail::add_incarnation(total, detail::sweep(std::move(e), tail));
    audit.channels.push_back(std::move(total));
  }
  return audit;
}

}  // namespace weir::ledger

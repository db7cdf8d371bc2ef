#include "run_ledger.hpp"

#include <algorithm>
#include <cstdlib>
#include <system_error>

#include <fmt/format.h>

#include <hdf5.h>

#include "weir/core/channel.hpp"
#include "weir/h5/attribute.hpp"
#include "weir/h5/handle.hpp"
#include "weir/h5/recording_format.hpp"
#include "weir/core/clock.hpp"
#include "weir/ledger/run_record.hpp"
#include "weir/recorder/naming.hpp"

namespace weir::supervisor {

namespace {

std::filesystem::path canonical_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  auto c = std::filesystem::weakly_canonical(dir.empty() ? std::filesystem::path(".") : dir, ec);
  return ec ? dir.lexically_normal() : c;
}

bool matches(const std::vector<std::string>& patterns, const std::string& name) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) { return config::glob_match(p, name); });
}

// The run numbers of run records named <prefix>_runNNNNNN.ledger.json in `dir`.
std::uint64_t highest_recorded_run(const std::filesystem::path& dir, const std::string& prefix) {
  std::uint64_t highest = 0;
  std::error_code ec;
  const std::string head = prefix + "_run";
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const std::size_t suffix = name.size() - std::min(name.size(), sizeof(ledger::kRunRecordSuffix) - 1);
    if (name.rfind(head, 0) != 0 || name.compare(suffix, std::string::npos, ledger::kRunRecordSuffix) != 0) continue;
    const std::string digits = name.substr(head.size(), suffix - head.size());
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    highest = std::max<std::uint64_t>(highest, std::strtoull(digits.c_str(), nullptr, 10));
  }
  return highest;
}

// A FILE-form segment's run, from its `run` attribute (a killed recorder's file opens as a SWMR
// reader); 0 when it cannot be read.
std::uint64_t file_run(const std::filesystem::path& path) {
  h5::quiet_errors();
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) file = H5Fopen(path.c_str(), H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, H5P_DEFAULT);
  if (file < 0) return 0;
  auto run = h5::read_u64_attr(file, h5::kAttrRun);
  H5Fclose(file);
  return run ? *run : 0;
}

}  // namespace

core::Result<std::vector<RecorderTarget>> recorder_targets(const config::Pipeline& p, const std::string& arena_name) {
  std::vector<RecorderTarget> out;
  for (const config::RecordDecl& r : p.records) {
    const rec::OutTarget target = rec::parse_out(r.out);
    RecorderTarget t{r.name, r.channels, r.origin, canonical_dir(target.dir), target.is_dir ? arena_name : target.stem, target.is_dir, 0};
    if (const auto it = r.params.find("run"); it != r.params.end()) {
      char* end = nullptr;
      t.run = std::strtoull(it->second.c_str(), &end, 10);
      if (it->second.empty() || *end != '\0' || t.run == 0)
        return tl::make_unexpected(
            config::error_at(r.origin, fmt::format("record \"{}\": 'run' = {} must be a whole number from 1", r.name, it->second)));
    }
    for (const RecorderTarget& other : out) {
      if (other.dir != t.dir || other.prefix != t.prefix || other.is_dir != t.is_dir) continue;
      if (t.is_dir && other.run != t.run) continue;  // two runs side by side in one directory
      const std::string run = t.run != 0 ? fmt::format("run {}", t.run) : std::string("the run weir run picks");
      return tl::make_unexpected(config::error_at(
          r.origin, fmt::format("record \"{}\": would write {} to '{}' as record \"{}\" ({}) does; give one of them "
                                "another 'out' (or, for a directory, its own 'run = N')",
                                r.name, t.is_dir ? run : std::string("the same files"), r.out, other.part,
                                other.origin.where())));
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::uint64_t next_run(const std::vector<RecorderTarget>& targets) {
  std::uint64_t highest = 0;
  for (const RecorderTarget& t : targets) {
    highest = std::max(highest, t.run);
    rec::OutTarget out{t.is_dir, t.dir, t.is_dir ? std::string{} : t.prefix};
    for (const rec::SegmentName& s : rec::existing_segments(out))
      highest = std::max(highest, !t.is_dir ? file_run(s.path) : s.arena == t.prefix ? s.run : 0);
    highest = std::max(highest, highest_recorded_run(t.dir, t.prefix));
  }
  return highest + 1;
}

RunLedger::RunLedger(std::vector<RecorderTarget> targets, std::uint64_t run, std::string pipeline_file,
                     std::function<void(const std::string&)> log)
    : targets_(std::move(targets)), run_(run), pipeline_file_(std::move(pipeline_file)), log_(std::move(log)) {}

std::filesystem::path RunLedger::record_path(const RecorderTarget& t) const {
  return ledger::run_record_path(t.dir, t.prefix, run(t));
}

void RunLedger::started(const core::Arena& arena) {
  auto status = core::inspect(arena.location().describe());
  const std::uint64_t created = status ? status->created_ns : 0;
  for (const RecorderTarget& t : targets_) {
    std::error_code ec;
    std::filesystem::create_directories(t.dir, ec);  // the recorder makes it too; the record goes first
    auto ok = ledger::update_run_record(record_path(t), [&](ledger::RunRecord& r) {
      if (r.writer.empty()) r.writer = "weir run";
      r.pipeline = pipeline_file_;
      if (r.started_ns == 0) r.started_ns = static_cast<std::uint64_t>(core::realtime_ns());
      r.stopped_ns = 0;
      r.run = run(t);
      r.arena = arena.location().name;
      r.arena_created_ns = created;
    });
    if (!ok) log_(fmt::format("run record: {}", ok.error().what));
  }
  channels(arena, false);
}

void RunLedger::channels(const core::Arena& arena, bool at_stop) {
  auto status = core::inspect(arena.location().describe());
  const std::uint64_t created = status ? status->created_ns : 0;
  const std::vector<core::ChannelInfo> now = core::list_channels(arena);
  const auto stop_ns = static_cast<std::uint64_t>(core::realtime_ns());
  for (const RecorderTarget& t : targets_) {
    auto ok = ledger::update_run_record(record_path(t), [&](ledger::RunRecord& r) {
      for (const core::ChannelInfo& c : now) {
        if (!matches(t.channels, c.name)) continue;
        const bool fresh = r.find_channel(c.name) == nullptr;
        ledger::ChannelMark& m = r.channel(c.name);
        if (fresh) {
          // At the start: the head then. At the stop, a channel that appeared during the run (a
          // driver or a replay made it) and that no recorder marked: from its first block.
          m.first_sequence = at_stop ? 0 : c.blocks_written;
          m.arena_created_ns = created;
        }
        m.written = std::max(m.written, c.blocks_written);
        m.dropped_at_source = std::max(m.dropped_at_source, c.dropped_at_source);
        if (at_stop) m.final = true;
      }
      if (at_stop) r.stopped_ns = stop_ns;
    });
    if (!ok) log_(fmt::format("run record: {}", ok.error().what));
  }
}

void RunLedger::stopped(const core::Arena& arena) { channels(arena, true); }

void RunLedger::parts(const Supervisor& supervisor) {
  for (const RecorderTarget& t : targets_) {
    auto ok = ledger::update_run_record(record_path(t), [&](ledger::RunRecord& r) {
      for (const auto& p : supervisor.parts()) {
        ledger::PartMark& m = r.part(p->plan.name);
        m.role = role_name(p->plan.role);
        m.state = part_status_name(p->status);
        m.last_exit = p->last_exit;
        m.restarts = static_cast<std::uint64_t>(p->restarts);
        m.essential = p->plan.essential;
      }
    });
    if (!ok) log_(fmt::format("run record: {}", ok.error().what));
  }
}

}  // namespace weir::supervisor

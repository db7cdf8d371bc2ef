// The recorder's setup: options, patterns, runs, continuing a run after a restart, readers and
// segments. The loop that moves blocks is in recorder_loop.cpp.
#include "weir/recorder/recorder.hpp"

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <system_error>

#include "process_info.hpp"
#include "recorder_state.hpp"
#include "segment_scan.hpp"
#include "weir/core/limits.hpp"
#include "weir/h5/handle.hpp"
#include "weir/h5/recording_format.hpp"

namespace weir::rec {

namespace {

constexpr unsigned kMaxEncodeThreads = 64;
constexpr int kMaxNameTries = 10'000;  // segment numbers tried past taken names before giving up

bool matches(const std::vector<std::string>& patterns, const std::string& name) {
  return std::any_of(patterns.begin(), patterns.end(),
                     [&](const std::string& p) { return fnmatch(p.c_str(), name.c_str(), 0) == 0; });
}

// Proves the directory takes new files: creates and removes a probe, so a read-only mount, a
// full disk or a path through a regular file is refused before anything starts. `error_number`:
// the errno of the failed call (0 when the failure is not an errno's).
core::Result<void> probe_dir(const std::filesystem::path& dir, int& error_number) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    error_number = ec.category() == std::generic_category() || ec.category() == std::system_category() ? ec.value() : 0;
    return core::fail(core::Errc::io_error, "--out " + dir.string() + ": cannot create the directory: " + ec.message());
  }
  if (!std::filesystem::is_directory(dir, ec))
    return core::fail(core::Errc::io_error, "--out " + dir.string() + ": not a directory");
  const std::filesystem::path probe = dir / (".weir-record-probe-" + std::to_string(getpid()));
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    error_number = errno;
    return core::fail(core::Errc::io_error, "--out " + dir.string() + ": cannot write there: " + std::strerror(errno));
  }
  const bool wrote = ::write(fd, "w", 1) == 1;
  const int write_errno = errno;
  ::close(fd);
  ::unlink(probe.c_str());
  if (!wrote) {
    error_number = write_errno;
    return core::fail(core::Errc::io_error, "--out " + dir.string() + ": cannot write there: " + std::strerror(write_errno));
  }
  return {};
}

std::string geometry_text(const core::Geometry& g) {
  return "slot_count=" + std::to_string(g.slot_count) + " key_bytes=" + std::to_string(g.key_bytes) +
         " value_bytes=" + std::to_string(g.value_bytes) + " channel_capacity=" + std::to_string(g.channel_capacity) +
         " channel_data_bytes=" + std::to_string(g.channel_data_bytes) +
         " consumer_capacity=" + std::to_string(g.consumer_capacity) + " vector_count=" +
         std::to_string(g.vector_count) + " vector_dim=" + std::to_string(g.vector_dim) +
         " group_count=" + std::to_string(g.group_count);
}

// The exact label names of a channel, from the arena's label dictionary (bit i = entry i).
std::string label_names(const core::Arena& arena, std::uint64_t label_ids) {
  const auto* labels = reinterpret_cast<const core::LabelEntry*>(arena.region(core::Region::groups) +
                                                                 core::labels_offset_in_groups());
  std::string out;
  for (std::uint32_t i = 0; i < core::kLabelCapacity; ++i) {
    if ((label_ids >> i & 1U) == 0 || labels[i].state.load(std::memory_order_acquire) != 2) continue;
    const std::uint32_t n = std::min<std::uint32_t>(labels[i].name_bytes, sizeof(labels[i].name));
    if (!out.empty()) out += ",";
    out.append(labels[i].name, n);
  }
  return out;
}

}  // namespace

StartFault classify_errno(int e) noexcept {
  StartFault f;
  f.error_number = e;
  f.disk_full = e == ENOSPC || e == EDQUOT;
  // ENOTDIR and EACCES are a wrong --out, not a failing disk: other errors.
  f.disk_fault = e == EIO || e == EROFS || e == ENOENT || e == ESTALE || e == EXDEV || e == ENODEV || e == ENXIO ||
                 e == EUCLEAN;
  return f;
}

core::Result<GapReason> parse_missing_before(std::string_view text) {
  for (const GapReason r : {GapReason::before_start, GapReason::disk_error, GapReason::recorder_down})
    if (gap_reason_name(r) == text) return r;
  return core::fail(core::Errc::invalid_argument, "--missing-before " + std::string(text) +
                                                      ": the reasons are before_start, disk_error and recorder_down");
}

namespace {

// The keep limits: numbers >= 0 (fractions of a GiB are fine), and `after = handed_over` only with a hand-off.
core::Result<void> check_keep(const RecordOptions& o) {
  const KeepOptions& k = o.keep;
  const std::pair<const char*, double> limits[] = {
      {"--keep-free-gib", k.free_gib}, {"--keep-max-gib", k.max_gib}, {"--keep-max-age-days", k.max_age_days}};
  for (const auto& [flag, value] : limits)
    if (!(value >= 0) || std::isinf(value))
      return core::fail(core::Errc::invalid_argument, std::string(flag) + " " + std::to_string(value) + ": a number >= 0 (0: no limit)");
  if (k.after == KeepAfter::handed_over && o.on_close.command.empty())
    return core::fail(core::Errc::invalid_argument,
                      "--keep-after handed_over: no --on-close hand-off is declared, so no file would ever be handed over");
  if (k.after && !k.enabled())
    return core::fail(core::Errc::invalid_argument, "--keep-after: set a limit too (--keep-free-gib, --keep-max-gib or --keep-max-age-days)");
  return {};
}

}  // namespace

core::Result<void> check_options(const RecordOptions& o, StartFault* fault) {
  if (o.channels.empty()) return core::fail(core::Errc::invalid_argument, "--channels: name at least one pattern");
  if (o.policy != core::ConsumerPolicy::lossless && o.policy != core::ConsumerPolicy::lossy)
    return core::fail(core::Errc::invalid_argument, "--policy: a recorder is lossless or lossy");
  if (o.flush_ms == 0) return core::fail(core::Errc::invalid_argument, "--flush-ms: must be at least 1");
  if (o.encode_threads > kMaxEncodeThreads)
    return core::fail(core::Errc::invalid_argument, "--encode-threads " + std::to_string(o.encode_threads) +
                                                        ": at most " + std::to_string(kMaxEncodeThreads));
  if (!(o.rotate_s >= 0) || !(o.duration_s >= 0))
    return core::fail(core::Errc::invalid_argument, "--rotate-s and --duration take seconds >= 0");
  if (o.out.empty()) return core::fail(core::Errc::invalid_argument, "--out: name a directory or a FILE.h5");
  if (o.missing_before != GapReason::before_start && o.missing_before != GapReason::disk_error &&
      o.missing_before != GapReason::recorder_down)
    return core::fail(core::Errc::invalid_argument, "--missing-before " +
                                                        std::string(gap_reason_name(o.missing_before)) +
                                                        ": the reasons are before_start, disk_error and recorder_down");
  if (o.fsync == FsyncPolicy::interval && !(o.fsync_interval_s > 0))
    return core::fail(core::Errc::invalid_argument, "--fsync-interval-s takes seconds > 0");
  if (auto ok = check_keep(o); !ok) return ok;
  const std::filesystem::path dir = parse_out(o.out).dir;
  if (o.require_mount) {
    auto root = on_root_filesystem(dir);
    if (!root) return tl::make_unexpected(root.error());
    if (*root) {
      if (fault != nullptr) fault->disk_fault = true;
      return core::fail(core::Errc::permission_denied, "--require-mount: --out " + dir.string() +
                                                           " is on the root filesystem, not on a mounted disk");
    }
  }
  int error_number = 0;
  auto probed = probe_dir(dir, error_number);
  if (!probed && fault != nullptr) *fault = classify_errno(error_number);
  return probed;
}

Recorder::Recorder(const core::Arena& arena, const RecordOptions& options, RecordControl& control)
    : arena_(arena), options_(options), control_(control), kv_(arena), target_(parse_out(options.out)),
      arena_name_(arena.location().name), host_pid_(static_cast<std::uint32_t>(getpid())),
      start_ticks_(process_start_ticks(host_pid_)), host_(host_name()) {}

void Recorder::notice(const std::string& line) const {
  if (control_.notice) control_.notice(line);
}

core::Result<void> Recorder::start() {
  h5::quiet_errors();
  const std::vector<core::ChannelInfo> channels = core::list_channels(arena_);
  if (!options_.wait_for_channels) {
    for (const std::string& pattern : options_.channels) {
      const bool any = std::any_of(channels.begin(), channels.end(),
                                   [&](const core::ChannelInfo& c) { return fnmatch(pattern.c_str(), c.name.c_str(), 0) == 0; });
      if (any) continue;
      std::string there;
      for (const core::ChannelInfo& c : channels) there += (there.empty() ? "" : ", ") + c.name;
      return core::fail(core::Errc::not_found, "no channel matches '" + pattern + "' in " +
                                                   arena_.location().describe() + "; channels there: " +
                                                   (there.empty() ? "(none)" : there));
    }
  }
  if (options_.controlled) run_control_.emplace(arena_);
  pick_run();
  if (auto ok = continue_run(); !ok) return ok;
  struct stat out {};
  if (::stat(target_.dir.c_str(), &out) != 0) {
    fault_errno_ = errno;
    return core::fail(core::Errc::io_error, "--out " + target_.dir.string() + ": " + std::strerror(errno));
  }
  out_dev_ = out.st_dev;
  out_ino_ = out.st_ino;
  out_fd_ = ::open(target_.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);  // fsynced after each new file
  remove_stale_makings();
  if (options_.checksums || !options_.on_close.command.empty()) {
    closed_files_ = std::make_unique<ClosedFiles>(run_, options_.checksums, options_.on_close,
                                                  [this](std::string_view line) { notice(std::string(line)); });
    // An earlier recorder's files of the run: a manifest and a hand-off each may still be owed; and
    // so may closed files of the recorder's other runs.
    for (const std::string& file : earlier_files_) closed_files_->add(file, false);
    for (const OwedFile& owed : owed_files()) closed_files_->add(owed.file, false, owed.run);
  }
  if (options_.keep.enabled()) {
    const KeepAfter after = options_.keep.after.value_or(options_.on_close.command.empty() ? KeepAfter::closed : KeepAfter::handed_over);
    retention_ = std::make_unique<Retention>(
        RetentionSetup{target_, arena_name_, run_, options_.keep, after == KeepAfter::handed_over, options_.part},
        [this](std::string_view line) { notice(std::string(line)); });
  }
  // A closed file is named, and then hashed, once it is on the disk: a final name or a manifest
  // never describes a file the disk may not hold yet (with --fsync never, at once: finish_name).
  if (options_.fsync != FsyncPolicy::never)
    syncer_.emplace(out_fd_, [this](std::uint64_t ns) { note_synced(ns); },
                    [this](const std::string& file) { named_closed(file); });
  read_record();
  if (auto w = core::Watcher::create(arena_); w) {
    watcher_.emplace(std::move(*w));
  } else {
    notice("cannot sleep on signal groups (" + w.error().what + "); looking for blocks every " +
           std::to_string(kWaitSliceNs / 1'000'000 / 5) + " ms instead");
  }
  for (const core::ChannelInfo& c : channels)
    if (matches(options_.channels, c.name))
      if (auto ok = follow_channel(c, options_.from_oldest ? core::StartAt::oldest : core::StartAt::sequence); !ok)
        return ok;
  kv_.for_each_key([&](std::string_view key, const core::ValueInfo& info) {
    if (matches(options_.keys, std::string(key))) follow_key(key, info);
  });
  for (const std::string& pattern : options_.keys)
    if (std::none_of(keys_.begin(), keys_.end(),
                     [&](const KeyFollow& k) { return fnmatch(pattern.c_str(), k.name.c_str(), 0) == 0; }))
      notice("no key matches '" + pattern + "' yet; a matching key starts a new segment when it appears");
  if (!follows_.empty() || !keys_.empty()) {
    wait_for_key_types();
    if (auto ok = open_segment(); !ok) return ok;
  }
  for (Follow& f : follows_) f.reader.set_kind(kRecorderKind);
  starting_ = false;
  update_record(false);
  control_.started.store(true, std::memory_order_release);  // readers registered, file open: callers may publish
  return {};
}

void Recorder::pick_run() {
  const std::vector<SegmentName> existing = existing_segments(target_);
  if (options_.run != 0) {
    run_ = options_.run;
  } else {
    std::uint64_t highest = 0;
    for (const SegmentName& s : existing) {
      std::uint64_t run = s.run;
      if (!target_.is_dir)
        if (auto info = read_segment(s.path); info) run = info->run;
      highest = std::max(highest, run);
    }
    run_ = highest + 1;
  }
  // FILE form: numbers are shared by every run in the series; DIR form: numbered within the run.
  for (const SegmentName& s : existing)
    if (!target_.is_dir || (s.run == run_ && s.arena == arena_name_)) next_number_ = std::max(next_number_, s.number + 1);
}

core::Result<void> Recorder::continue_run() {
  std::vector<SegmentName> to_name;  // a killed recorder's NAME.partial files
  for (const SegmentName& s : existing_segments(target_)) {
    if (target_.is_dir && (s.run != run_ || s.arena != arena_name_)) continue;
    auto info = read_segment(s.path);
    if (!info) {
      notice("skipping " + s.path.string() + ": " + info.error().what);
      continue;
    }
    if (info->run != run_) continue;
    if (info->marked) {
      if (info->host != host_)
        return core::fail(core::Errc::already_exists, "run " + std::to_string(run_) + ": " + s.path.string() +
                                                          " is open for writing by a recorder on host '" + info->host +
                                                          "'; it may still run");
      if (same_process_alive(info->recorder_pid, info->recorder_start_ticks))
        return core::fail(core::Errc::already_exists, "run " + std::to_string(run_) + " is being recorded by pid " +
                                                          std::to_string(info->recorder_pid) + " (" +
                                                          s.path.string() + ")");
      if (auto ok = clear_marks(s.path); !ok) return tl::make_unexpected(ok.error());
      notice("cleared the write marks a killed recorder (pid " + std::to_string(info->recorder_pid) + ") left in " +
             s.path.string());
    }
    // Where each channel resumes: one past the last sequence any file of the run accounts for
    // (its blocks, and gap rows such as a disk_error tail), so nothing is accounted twice.
    if (info->arena_created_ns == arena_.header().created_ns)
      for (const ChannelEnd& e : info->channels) {
        std::uint64_t& end = resume_[e.channel];  // a channel in a file and no block yet: from its start
        if (e.any) end = std::max(end, e.end);
      }
    // Closed, or cleared of a dead recorder's marks: final now, and named so once no file of the run
    // has turned out to be a live recorder's.
    if (s.partial) to_name.push_back(s);
    earlier_files_.push_back(final_path(s).string());
    previous_ = std::move(*info);
  }
  for (const SegmentName& s : to_name)
    if (auto named = take_final_name(s, fault_errno_); !named)
      return core::fail(named.error().code, "run " + std::to_string(run_) + ": " + named.error().what);
  if (previous_ && previous_->arena_created_ns != arena_.header().created_ns) {
    notice("run " + std::to_string(run_) + " continues on a re-created arena: block sequences start afresh");
    previous_->channels.clear();
  }
  return {};
}

core::Result<void> Recorder::follow_channel(const core::ChannelInfo& c, core::StartAt start) {
  // The channel's ledger begins at first_sequence: the run record's (when the run already follows
  // it in this incarnation of the arena), else 0. Continuing a run: from one past the last block the
  // run's files account for, with a recorder_restart marker there and recorder_down (or
  // recorder_stopped) for what the ring no longer holds. Otherwise from the next block published
  // (or the oldest in the ring), with before_start for what came before.
  const std::uint64_t head = c.blocks_written;  // a few blocks stale at most: they are recorded too
  const std::uint64_t created = arena_.header().created_ns;
  std::uint64_t first = 0;
  bool in_record = false;
  if (record_)
    if (const ledger::ChannelMark* m = record_->find_channel(c.name); m != nullptr && m->arena_created_ns == created) {
      first = m->first_sequence;
      in_record = true;
    }
  std::uint64_t from = 0;
  GapReason first_loss = GapReason::lapped;  // registered at `from`: a loss after it is the reader's own
  std::vector<GapRow> opening;
  const auto resume = resume_.find(c.name);
  const bool resumes = resume != resume_.end() ? resume->second <= head : previous_ && in_record && first <= head;
  if (resumes) {
    from = resume != resume_.end() ? std::max(resume->second, first) : first;
    first_loss = previous_ && previous_->stopped ? GapReason::recorder_stopped : GapReason::recorder_down;
    opening.push_back(GapRow{from, 0, static_cast<std::uint8_t>(GapReason::recorder_restart), realtime_ns()});
  } else if (options_.controlled) {
    // A controlled run answers for the blocks from its start: from the first block in the ring that
    // begins at or after it (or the next to come), where the reader registers, so the writer cannot
    // lap it there; a block published later that still begins before the start is skipped
    // (before_run) and first_sequence moves past it.
    from = first = run_boundary(c.name, head);
  } else {
    from = head;  // from now on
    if (start == core::StartAt::oldest) from = head > c.ring_blocks ? head - c.ring_blocks + 1 : 0;
    if (first <= head) from = std::max(from, first);
    if (from > first)
      opening.push_back(GapRow{first, from - first, static_cast<std::uint8_t>(options_.missing_before), realtime_ns()});
  }
  auto reader = core::ChannelReader::open(arena_, c.name, options_.policy, "recorder", core::StartAt::sequence, from);
  if (!reader) return tl::make_unexpected(core::with_context(reader.error(), "record"));
  const core::ChannelDesc& d = reader->desc();
  // Named a recorder's only once it writes: at start, after the first file is open (run_start's
  // wait for the recorders reads the kind, so no driver starts while the first file is made).
  if (!starting_) reader->set_kind(kRecorderKind);
  if (watcher_)
    if (auto g = watcher_->subscribe_channel(c.name); !g)
      notice("channel '" + c.name + "': no wake-ups (" + g.error().what + "); read on other wake-ups");
  ChannelStatic info;
  info.name = c.name;
  info.dtype = c.dtype;
  info.sample_bytes = core::dtype_bytes(c.dtype);
  info.rate_hz = c.rate_hz;
  info.units = c.units;
  info.labels = label_names(arena_, d.label_ids);
  info.samples_per_block = c.samples_per_block;
  info.ring_blocks = c.ring_blocks;
  info.policy = core::policy_name(options_.policy);
  info.frame = c.frame;
  info.codec = codec_for(options_, c.name, c.dtype);
  const std::uint64_t dropped = d.dropped_at_source.load(std::memory_order_relaxed);
  std::unique_ptr<PvLogSource> pv_log;
  if (core::is_pv_log_channel(c.dtype, c.frame)) {  // its NXlogs read the PVs' meta keys
    pv_log = std::make_unique<PvLogSource>();
    pv_log->channel = c.name;
    pv_log->kv = &kv_;
    info.pv_log = pv_log.get();
  }
  Follow follow{std::move(*reader), std::move(info), kNoSlot, dropped, first_loss};
  follow.pv_log = std::move(pv_log);
  follow.opening = std::move(opening);
  follow.first_sequence = first;
  follow.awaiting_start = options_.controlled && !resumes;
  follows_.push_back(std::move(follow));
  return {};
}

std::uint64_t Recorder::run_boundary(const std::string& channel, std::uint64_t head) const {
  auto scan = core::ChannelReader::open(arena_, channel, core::ConsumerPolicy::lossy, "recorder scan", core::StartAt::oldest);
  if (!scan) return head;
  core::BlockView view;
  std::uint64_t lost = 0;
  for (;;) {
    const core::NextStatus status = scan->next(view, lost);
    if (status == core::NextStatus::empty) return scan->cursor();
    if (status == core::NextStatus::lost) continue;
    const std::uint64_t t0 = view.realtime_ns;
    const std::uint64_t at = view.sequence;
    if (!scan->done(view)) continue;  // overwritten while looked at: a newer block is there now
    if (static_cast<std::int64_t>(t0) >= options_.run_start_ns) return at;
  }
}

void Recorder::follow_key(std::string_view key, const core::ValueInfo& info) {
  KeyFollow k;
  k.name = std::string(key);
  k.numeric = info.type == core::ValueType::i64 || info.type == core::ValueType::u64 ||
              info.type == core::ValueType::f64 || info.type == core::ValueType::none;
  k.buffer.resize(kv_.value_bytes());
  if (watcher_ && key_watches_ < kMaxKeyWatches && watcher_->subscribe_key(key)) ++key_watches_;
  keys_.push_back(std::move(k));
}

bool Recorder::discover() {
  bool found = false;
  for (const core::ChannelInfo& c : core::list_channels(arena_)) {
    if (!matches(options_.channels, c.name)) continue;
    if (std::any_of(follows_.begin(), follows_.end(), [&](const Follow& f) { return f.info.name == c.name; })) continue;
    // A channel that appeared while recording: from its oldest block still in the ring.
    if (auto ok = follow_channel(c, core::StartAt::oldest); !ok) {
      notice("channel '" + c.name + "': " + ok.error().what);
      continue;
    }
    notice("channel '" + c.name + "' appeared");
    found = true;
  }
  if (!options_.keys.empty())
    kv_.for_each_key([&](std::string_view key, const core::ValueInfo& info) {
      if (!matches(options_.keys, std::string(key))) return;
      if (std::any_of(keys_.begin(), keys_.end(), [&](const KeyFollow& k) { return k.name == key; })) return;
      follow_key(key, info);
      notice("key '" + std::string(key) + "' appeared");
      found = true;
    });
  return found;
}

std::string Recorder::key_units(const std::string& key, std::vector<std::byte>& buffer) const {
  core::ValueInfo info;
  if (kv_.get(key + h5::kUnitsSuffix, buffer, info) != core::KvStatus::ok || info.type != core::ValueType::text) return {};
  const auto* chars = reinterpret_cast<const char*>(buffer.data());
  const std::size_t n = std::min<std::size_t>(info.length, buffer.size());
  return std::string(chars, std::find(chars, chars + n, '\0'));
}

core::Result<void> Recorder::open_segment() {
  SegmentMeta meta;
  meta.run = run_;
  meta.host = host_;
  meta.arena = arena_name_;
  meta.arena_geometry = geometry_text(arena_.geometry());
  meta.arena_created_ns = arena_.header().created_ns;
  meta.pipeline = options_.pipeline_text;
  meta.nexus = &options_.nexus;
  meta.recorder_pid = host_pid_;
  meta.recorder_start_ticks = start_ticks_;
  meta.clock = read_host_clock();
  std::vector<ChannelStatic> channels;
  for (const Follow& f : follows_) channels.push_back(f.info);
  std::vector<KeySpec> keys;
  const std::uint32_t width = kv_.value_bytes();  // a text log holds whole values
  for (KeyFollow& k : keys_) {
    // A key's log takes the kind the key has now (SWMR fixes datasets for the segment): an array's
    // dtype and shape, text for a text key; a key still empty keeps its kind and is watched for text.
    KeySpec spec{k.name, k.numeric, width, {}, core::ValueType::f64, {}};
    core::ValueView view;
    const bool seen = kv_.view(k.name, view) == core::KvStatus::ok && view.valid();
    const core::ValueType type = seen ? view.info().type : core::ValueType::none;
    if (type == core::ValueType::array) spec.array = view.info().array;
    if (type == core::ValueType::text || type == core::ValueType::bytes) spec.numeric = false;
    if (type == core::ValueType::u64 || type == core::ValueType::i64) spec.number = type;  // integers stay integers
    spec.units = key_units(k.name, k.buffer);
    k.empty_at_open = type == core::ValueType::none;
    keys.push_back(std::move(spec));
  }
  std::uint64_t reserve = kCloseReserveBytes;
  for (const ChannelStatic& c : channels) {
    const std::uint64_t block = std::uint64_t{c.samples_per_block} * c.sample_bytes;
    // What may be in memory and not yet in the file: the chunks HDF5 holds back, the staged
    // chunk and block, a chunk of table rows.
    reserve += (kHeldChunks + 1) * std::max(kTargetChunkBytes, block) + block + kTableChunkRows * kTableRowBytes;
    if (c.codec.method == codec::Method::none) continue;
    // Chunks being encoded, written once they are (never larger than they were, but for a few bytes).
    if (!encoders_) encoders_ = std::make_unique<EncodePool>(EncodePool::threads_for(options_.encode_threads));
    reserve += (encoders_->threads() + 2) * std::max(kTargetChunkBytes, block);
  }
  reserve_bytes_ = options_.min_free_bytes >= 0 ? static_cast<std::uint64_t>(options_.min_free_bytes) : reserve;
  if (auto free = free_bytes(target_.dir); free && *free < reserve_bytes_) {
    disk_low_ = true;
    return core::fail(core::Errc::io_error, "disk full: " + std::to_string(*free) + " bytes free in " +
                                                target_.dir.string() + ", below the " + std::to_string(reserve_bytes_) +
                                                " bytes kept to close files cleanly");
  }
  for (int attempt = 0; attempt < kMaxNameTries; ++attempt, ++next_number_) {
    const std::filesystem::path path = segment_path(target_, arena_name_, run_, next_number_);
    const std::filesystem::path partial = partial_path(path);  // its name until closed
    std::error_code ec;
    if (std::filesystem::exists(path, ec) || std::filesystem::exists(partial, ec)) continue;  // never overwrite: the next free number
    meta.segment = next_number_;
    meta.start_ns = realtime_ns();
    // Made under a hidden name no reader lists, and named NAME.partial only once whole and on the
    // disk: a fault or a kill while it is made leaves nothing under a segment's name. It takes its
    // final name once closed (finish_name).
    const std::filesystem::path making = making_path(path, host_pid_);
    std::filesystem::remove(making, ec);
    auto segment = Segment::create(making, meta, channels, keys, encoders_.get(), !options_.staged_writes);
    if (!segment) {
      std::filesystem::remove(making, ec);  // a half-made file from a failed create holds nothing
      if (auto dir = check_out_dir(); !dir) return dir;  // the directory went or changed under it
      return tl::make_unexpected(segment.error());
    }
    // The directory may have changed between the check before and the create (a lazy unmount):
    // a file that is not where the earlier ones are is given up at once.
    if (struct stat made {}; ::stat(making.c_str(), &made) != 0 || made.st_dev != out_dev_) {
      (void)segment->abandon();
      std::filesystem::remove(making, ec);
      if (auto dir = check_out_dir(); !dir) return dir;
      return core::fail(core::Errc::io_error, path.string() + ": not on the filesystem recording began on");
    }
    bool taken = false;
    if (auto named = name_segment(*segment, making, partial, taken); !named) {
      (void)segment->abandon();
      std::filesystem::remove(making, ec);
      if (taken) continue;  // another process took the name meanwhile
      if (auto dir = check_out_dir(); !dir) return dir;
      return named;
    }
    segment_ = std::move(*segment);
    segment_due_ = false;
    ++next_number_;
    for (std::size_t i = 0; i < follows_.size(); ++i) {
      Follow& f = follows_[i];
      f.slot = i;
      for (const GapRow& row : f.opening) {  // a restart's marker, before_start: the channel's first rows
        f.gaps += segment_.channel(i).add_gap(row) ? 1 : 0;
        f.gap_blocks += row.blocks;
      }
      f.opening.clear();
      segment_.channel(i).log_carried();  // PV log entries the last file could not log
      if (segment_.channel(i).wants_new_file()) pv_new_file_ = true;
    }
    for (std::size_t i = 0; i < keys_.size(); ++i) {
      keys_[i].slot = i;
      keys_[i].logged = false;
    }
    key_news_ = false;
    files_.push_back(path.string());  // the name it has once closed
    file_blocks_.emplace_back();
    checked_file_bytes_ = 0;
    notice("recording to " + partial.string() + " (" + path.filename().string() + " once closed)");
    return {};
  }
  return core::fail(core::Errc::already_exists, "no free segment name in " + target_.dir.string());
}

void Recorder::account_segment(bool all_committed) {
  FileBlocks& file = file_blocks_.back();
  file.blocks.assign(follows_.size(), 0);
  file.samples.assign(follows_.size(), 0);
  for (std::size_t i = 0; i < follows_.size(); ++i) {
    Follow& f = follows_[i];
    if (f.slot == kNoSlot) continue;
    const ChannelGroup& g = segment_.channel(f.slot);
    file.blocks[i] = all_committed ? g.blocks() : g.blocks_written();
    file.samples[i] = all_committed ? g.samples() : g.samples_written();
    f.done_blocks += file.blocks[i];
    f.done_samples += file.samples[i];
    f.slot = kNoSlot;
  }
}

// A segment after the recorder's first that recorded channels and closes with none of their blocks
// or gap rows, and no key value an earlier file lacks (a new channel's file the stop came before, say),
// holds nothing: it is removed.
core::Result<void> Recorder::close_segment() {
  if (!segment_.is_open()) return {};
  const bool nothing = segment_holds_nothing();
  account_segment(true);  // close() writes every committed block, or fails and says so
  const std::string file = segment_.path().string();
  int fd = -1;
  auto ok = segment_.close(realtime_ns(), options_.fsync == FsyncPolicy::never ? nullptr : &fd);
  if (!ok) {
    file_blocks_.back().failed = true;
    if (fd >= 0) ::close(fd);
    return ok;
  }
  if (nothing) return remove_closed(file, fd);
  return finish_name(file, fd);
}

bool Recorder::segment_holds_nothing() const noexcept {
  if (follows_.empty() || key_news_ || files_.size() < 2) return false;  // the first file stays: the run's mark
  return std::none_of(follows_.begin(), follows_.end(), [this](const Follow& f) {
    if (f.slot == kNoSlot) return false;
    const ChannelGroup& g = segment_.channel(f.slot);
    return g.blocks() > 0 || g.gap_rows() > 0 || g.pv_log_rows() > 0;
  });
}

// The closed empty segment goes, its number is the next file's, and the directory is fsynced (by
// policy). When it cannot be removed it stays, synced like any closed file.
core::Result<void> Recorder::remove_closed(const std::string& file, int fd) {
  std::error_code ec;
  if (!std::filesystem::remove(file, ec) || ec) {
    notice("could not remove " + file + ", which holds nothing: " + (ec ? ec.message() : "not there"));
    return finish_name(file, fd);
  }
  if (fd >= 0) ::close(fd);
  files_.pop_back();
  file_blocks_.pop_back();
  --next_number_;
  notice("removed " + file + ": it closed holding no block, gap row or new key value");
  if (options_.fsync != FsyncPolicy::never && out_fd_ >= 0 && ::fsync(out_fd_) != 0) {
    fault_errno_ = errno;
    return core::fail(core::Errc::io_error, "fsync " + target_.dir.string() + ": " + std::strerror(errno));
  }
  return {};
}

core::Result<RecordSummary> record(const core::Arena& arena, const RecordOptions& options, RecordControl& control) {
  // A file whose driver failed (EIO) cannot be closed; HDF5's exit-time cleanup would try again and
  // crash in it. Every file is closed here or given up explicitly, so that cleanup has nothing to do.
  // (Refused, harmlessly, when HDF5 is already in use in this process.)
  (void)H5dont_atexit();
  StartFault fault;
  if (auto ok = check_options(options, &fault); !ok) {
    if (!fault.disk_full && !fault.disk_fault) return tl::make_unexpected(ok.error());
    RecordSummary s;  // a disk that fails before anything starts: the same classes as while running
    s.run = options.run;
    s.stopped_by = "error";
    s.error = ok.error().what;
    s.disk_full = fault.disk_full;
    s.disk_fault = !fault.disk_full;
    s.error_number = fault.error_number;
    return s;
  }
  Recorder recorder(arena, options, control);
  if (auto ok = recorder.start(); !ok) {
    if (!recorder.stop_at_start(ok.error())) return tl::make_unexpected(ok.error());
    return recorder.summary();
  }
  recorder.run();
  return recorder.summary();
}

}  // namespace weir::rec

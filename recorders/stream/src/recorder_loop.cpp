// The recorder's loop: read blocks in place, stage them, write whole chunks, flush on a timer,
// rotate, and stop cleanly or on a write failure.
#include <time.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "process_info.hpp"
#include "recorder_state.hpp"
#include "weir/core/view_copy.hpp"

namespace weir::rec {

namespace {

constexpr std::int64_t kNsPerMs = 1'000'000;
constexpr std::int64_t kNsPerUs = 1'000;
constexpr double kNsPerSecondReal = 1e9;
constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kFallbackSleepNs = kWaitSliceNs / 5;  // no watcher: look for blocks this often
constexpr std::int64_t kKeyTypePollNs = 5 * kNsPerMs;        // the first file's wait for keys' first values
constexpr std::size_t kKeysNamed = 3;                         // keys a notice names, at most
constexpr std::uint64_t kDrainAll = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint64_t kCheckDiskEveryBytes = 1 << 20;  // free space is looked at no more often than this
// At a stop: how long the recorder waits, at most, for writers still publishing (their stop signal
// may have come with its own), and how long a live writer may publish nothing before it is taken as
// idle. A recorder stopped while its writer runs on stops within kStopWaitNs.
constexpr std::int64_t kStopWaitNs = 500 * kNsPerMs;
constexpr std::int64_t kWriterQuietNs = 100 * kNsPerMs;
constexpr int kCarriedFilesAtStop = 4;  // new files a stop opens, at most, for carried PV log entries

void sleep_ns(std::int64_t ns) noexcept {
  if (ns <= 0) return;
  const timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
  nanosleep(&ts, nullptr);
}

std::int64_t deadline_after(double seconds, std::int64_t from) noexcept {
  if (seconds <= 0) return kNever;
  return from + static_cast<std::int64_t>(std::llround(seconds * kNsPerSecondReal));
}

}  // namespace

core::Result<void> Recorder::add_gap(Follow& f, std::uint64_t sequence, std::uint64_t blocks, GapReason reason) {
  if (blocks == 0 && reason != GapReason::disk_error) return {};
  f.gap_blocks += blocks;
  if (f.slot == kNoSlot) {
    ++f.gaps;
    return {};
  }
  ChannelGroup& g = segment_.channel(f.slot);
  if (g.add_gap(GapRow{sequence, blocks, static_cast<std::uint8_t>(reason), realtime_ns()})) ++f.gaps;
  if (g.pending()) return g.write_pending();
  return {};
}

// Reads up to `limit` blocks of one channel, or until its cursor reaches `until`.
core::Result<std::uint64_t> Recorder::pump(Follow& f, std::uint64_t limit, std::uint64_t until) {
  if (f.slot == kNoSlot || f.run_done) return 0;
  ChannelGroup& g = segment_.channel(f.slot);
  const core::ChannelDesc& d = f.reader.desc();
  // Blocks the writer dropped at the source never got a sequence number: they sit before the
  // writer's next block, which is where the gap row puts them.
  const std::uint64_t dropped = d.dropped_at_source.load(std::memory_order_relaxed);
  if (dropped != f.dropped_seen) {
    const std::uint64_t next = d.head.load(std::memory_order_acquire);
    if (auto ok = add_gap(f, next, dropped - f.dropped_seen, GapReason::dropped_at_source); !ok)
      return tl::make_unexpected(ok.error());
    f.dropped_seen = dropped;
  }
  const std::uint64_t block_bytes = std::uint64_t{f.info.samples_per_block} * f.info.sample_bytes;
  std::uint64_t work = 0;
  while (work < limit && f.reader.cursor() < until) {
    core::BlockView view;
    std::uint64_t lost = 0;
    const std::uint64_t at = f.reader.cursor();
    const core::NextStatus status = f.reader.next(view, lost);
    if (status == core::NextStatus::empty) break;
    ++work;
    if (status == core::NextStatus::lost) {
      if (f.awaiting_start) {  // blocks of unknown time at a controlled run's start: the run answers for them
        f.awaiting_start = false;
        f.first_sequence = at;
        marks_due_ = true;
      }
      // The writer's reason for a gap it published; lapped when it overwrote them before we read
      // them (before the first read: why the recorder began where it did).
      GapReason reason = core::lost_reason(view.flags);
      if (reason == GapReason::lapped && !f.read_any) reason = f.first_loss;
      if (auto ok = add_gap(f, at, lost, reason); !ok) return tl::make_unexpected(ok.error());
      f.read_any = true;
      continue;
    }
    if (options_.controlled) {
      if (f.awaiting_start && before_run(f, view)) continue;
      if (past_run(f, view)) break;
    }
    const std::uint32_t samples = std::min(view.samples, f.info.samples_per_block);  // a torn count is discarded below
    core::copy_unvalidated(g.stage_samples(), view.data,
                           std::min<std::uint64_t>(block_bytes, std::uint64_t{samples} * f.info.sample_bytes));
    if (!f.reader.done(view)) {  // overwritten while we copied: what was copied is not committed
      if (auto ok = add_gap(f, view.sequence, 1, GapReason::lapped); !ok) return tl::make_unexpected(ok.error());
      f.read_any = true;
      continue;
    }
    f.read_any = true;
    g.commit_block(BlockMeta{view.sequence, samples, view.flags, view.realtime_ns, view.monotonic_ns, view.first_sample});
    if (options_.controlled && !first_block_seen_) {
      first_block_seen_ = true;
      run_control_->recorder_open(options_.run_row, run_, realtime_ns());
    }
    if (g.pending())
      if (auto ok = g.write_pending(); !ok) return tl::make_unexpected(ok.error());
    if (g.wants_new_file()) pv_new_file_ = true;  // a PV log entry carried, or a meta this file cannot show
    if (options_.throttle_us > 0) sleep_ns(std::int64_t{options_.throttle_us} * kNsPerUs);
  }
  return work;
}

namespace {

// A key's value as a row of a numeric log of type `log` (u64, i64 or f64): its bits in `out`. An f64
// log takes every value (an integer as the nearest double, text as its number or NaN); an integer
// log only what it holds exactly: false for any other value.
bool log_number(core::ValueType log, core::ValueType type, std::uint64_t word, std::span<const std::byte> bytes,
                std::uint64_t& out) noexcept {
  const auto* text = reinterpret_cast<const char*>(bytes.data());
  const char* text_end = text + bytes.size();
  if (log == core::ValueType::f64) {
    double number = std::numeric_limits<double>::quiet_NaN();
    if (type == core::ValueType::i64) number = static_cast<double>(std::bit_cast<std::int64_t>(word));
    if (type == core::ValueType::u64) number = static_cast<double>(word);
    if (type == core::ValueType::f64) number = std::bit_cast<double>(word);
    if (type == core::ValueType::text || type == core::ValueType::bytes) {
      double parsed = 0;
      const auto [end, ec] = std::from_chars(text, text_end, parsed);
      if (ec == std::errc{} && end == text_end) number = parsed;
    }
    out = std::bit_cast<std::uint64_t>(number);
    return true;
  }
  const bool is_unsigned = log == core::ValueType::u64;
  if (type == log) {
    out = word;
    return true;
  }
  if (type == core::ValueType::u64) {  // into an i64 log
    out = word;
    return word <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  }
  if (type == core::ValueType::i64) {  // into a u64 log
    out = word;
    return std::bit_cast<std::int64_t>(word) >= 0;
  }
  if (type == core::ValueType::f64) {  // an integral double within the log's range
    const double d = std::bit_cast<double>(word);
    if (!std::isfinite(d) || std::trunc(d) != d) return false;
    if (is_unsigned) {
      if (d < 0 || d >= 18446744073709551616.0) return false;
      out = static_cast<std::uint64_t>(d);
    } else {
      if (d < -9223372036854775808.0 || d >= 9223372036854775808.0) return false;
      out = std::bit_cast<std::uint64_t>(static_cast<std::int64_t>(d));
    }
    return true;
  }
  if (type == core::ValueType::text || type == core::ValueType::bytes) {
    if (is_unsigned) {
      const auto [end, ec] = std::from_chars(text, text_end, out);
      return ec == std::errc{} && end == text_end && text != text_end;
    }
    std::int64_t parsed = 0;
    const auto [end, ec] = std::from_chars(text, text_end, parsed);
    out = std::bit_cast<std::uint64_t>(parsed);
    return ec == std::errc{} && end == text_end && text != text_end;
  }
  return false;
}

}  // namespace

core::Result<void> Recorder::sample_keys() {
  if (!segment_.is_open()) return {};
  const std::uint64_t now = realtime_ns();
  const double t = static_cast<double>(now - std::min(now, segment_.start_ns())) / kNsPerSecondReal;
  for (KeyFollow& k : keys_) {
    if (k.slot == kNoSlot) continue;
    if (!k.resolved) k.resolved = kv_.resolve(k.name, k.handle, false) == core::KvStatus::ok;
    if (!k.resolved) continue;
    core::ValueView view;
    const core::KvStatus seen = kv_.view(k.handle, view);
    if (seen == core::KvStatus::not_found || seen == core::KvStatus::stale_handle) {
      k.resolved = false;  // deleted (and maybe re-created elsewhere): resolve again next time
      continue;
    }
    if (seen != core::KvStatus::ok || (k.logged && view.info().epoch == k.last_epoch)) continue;
    core::ValueInfo info;
    if (kv_.get(k.handle, k.buffer, info) != core::KvStatus::ok) continue;  // busy or torn: next wake-up
    if (!k.ever_logged || k.owed || info.epoch != k.last_epoch) key_news_ = true;  // not a repeat of an earlier file
    k.last_epoch = info.epoch;
    k.logged = true;
    k.ever_logged = true;
    k.owed = false;
    KeyLog& log = segment_.key(k.slot);
    const std::span<const std::byte> bytes(k.buffer.data(), info.length);
    if (log.is_array()) {  // a value of another type or shape is refused, and counted
      auto logged = log.add_array(t, info.type == core::ValueType::array ? info.array : core::ArrayShape{}, bytes);
      if (!logged) return tl::make_unexpected(logged.error());
      k.owed = !*logged;
      if (!*logged && log.refused() == 1)
        notice("key '" + k.name + "': its dtype or shape changed; not logged until the next file");
      if (log.pending())
        if (auto ok = log.write_pending(); !ok) return ok;
      continue;
    }
    // An array value in a plain log, the first text of a key that was empty when the file opened (its
    // log is f64), or a value an integer log cannot hold exactly: the right dataset can only be made
    // in a new file, which logs the value. (A first integer of a key empty at open goes into its f64
    // log as the nearest double: no new file for every counter a part declares empty; the next file
    // logs it as an integer.)
    const bool is_text = info.type == core::ValueType::text || info.type == core::ValueType::bytes;
    const bool is_integer = info.type == core::ValueType::i64 || info.type == core::ValueType::u64;
    std::uint64_t word = 0;
    std::memcpy(&word, k.buffer.data(), std::min<std::size_t>(sizeof word, info.length));
    std::uint64_t stored = 0;
    const bool fits = !log.numeric() || log_number(log.number(), info.type, word, bytes, stored);
    if (info.type == core::ValueType::array || (is_text && log.numeric() && k.empty_at_open) || !fits) {
      key_kind_changed_ = true;
      k.owed = true;
      continue;
    }
    k.empty_at_open = false;
    if (log.numeric()) {
      log.add_number(t, stored);
    } else if (is_integer || info.type == core::ValueType::f64) {
      char text[32];
      std::to_chars_result put{};
      if (info.type == core::ValueType::i64) put = std::to_chars(text, text + sizeof text, std::bit_cast<std::int64_t>(word));
      if (info.type == core::ValueType::u64) put = std::to_chars(text, text + sizeof text, word);
      if (info.type == core::ValueType::f64) put = std::to_chars(text, text + sizeof text, std::bit_cast<double>(word));
      log.add_text(t, std::as_bytes(std::span<const char>(text, put.ec == std::errc{} ? put.ptr : text)));
    } else {
      log.add_text(t, bytes);
    }
    if (log.pending())
      if (auto ok = log.write_pending(); !ok) return ok;
  }
  return {};
}

void Recorder::publish_counters() {
  for (Follow& f : follows_) {
    std::uint64_t blocks = f.done_blocks, samples = f.done_samples;
    if (f.slot != kNoSlot) {
      blocks += segment_.channel(f.slot).blocks_written();
      samples += segment_.channel(f.slot).samples_written();
    }
    core::ConsumerRow& row = f.reader.counters();
    row.blocks_out.store(blocks, std::memory_order_relaxed);  // relaxed: `weir ls` only displays them
    row.bytes_out.store(samples * f.info.sample_bytes, std::memory_order_relaxed);
  }
  if (retention_ && !options_.part.empty()) {
    const RetentionCounters& r = retention_->counters();
    const std::pair<const char*, const std::atomic<std::uint64_t>*> kept[] = {
        {".retention_deleted_files", &r.deleted_files}, {".retention_deleted_bytes", &r.deleted_bytes},
        {".retention_failures", &r.failures},           {".retention_kept_back", &r.kept_back}};
    for (const auto& [suffix, value] : kept) (void)kv_.set_u64(options_.part + suffix, value->load(std::memory_order_relaxed));
    // Once set by check_disk at the floor, the alarm stays up for the stop.
    if (!disk_low_) (void)kv_.set_u64(options_.part + ".retention_blocked", r.blocked.load(std::memory_order_relaxed));
  }
  if (!closed_files_ || options_.part.empty()) return;
  const ClosedFileCounters& c = closed_files_->counters();
  const std::pair<const char*, const std::atomic<std::uint64_t>*> keys[] = {
      {".files_hashed", &c.hashed_files},         {".bytes_hashed", &c.hashed_bytes},
      {".hash_failures", &c.hash_failures},       {".hash_ms", nullptr},
      {".handoff_ok", &c.handoff_ok},             {".handoff_failures", &c.handoff_failures},
      {".handoff_timeouts", &c.handoff_timeouts}, {".handoff_pending", &c.handoff_pending}};
  for (const auto& [suffix, value] : keys) {
    if (suffix == std::string_view(".handoff_ok") && options_.on_close.command.empty()) break;  // no hand-off declared
    // relaxed: the counters are only displayed; each key is one value, not a consistent set
    const std::uint64_t v = value != nullptr ? value->load(std::memory_order_relaxed)
                                             : c.hash_ns.load(std::memory_order_relaxed) / 1'000'000;
    (void)kv_.set_u64(options_.part + suffix, v);  // a full KV store: the counters are also in the log lines
  }
}

core::Result<void> Recorder::check_disk() {
  checked_file_bytes_ = segment_.bytes();
  if (reserve_bytes_ == 0) return {};  // --min-free-mb 0: HDF5's own write errors are the only check
  auto free = free_bytes(target_.dir);
  if (!free) return tl::make_unexpected(free.error());
  if (retention_ && *free < gib_bytes(options_.keep.free_gib)) retention_->poke();
  if (*free >= reserve_bytes_) return {};
  disk_low_ = true;
  if (retention_) {  // the alarm, before the stop: nothing retention may delete made room in time
    if (!options_.part.empty()) (void)kv_.set_u64(options_.part + ".retention_blocked", 1);
    notice("retention blocked: " + std::to_string(*free) + " bytes free in " + target_.dir.string() +
           " and nothing more may be deleted (files of the open run, or not handed over yet): stopping at the floor");
  }
  return core::fail(core::Errc::io_error, "disk full: " + std::to_string(*free) + " bytes free in " +
                                              target_.dir.string() + ", below the " + std::to_string(reserve_bytes_) +
                                              " bytes kept to close " + segment_.path().string() + " cleanly");
}

core::Result<void> Recorder::flush() {
  if (!segment_.is_open()) return check_out_dir();
  auto ok = segment_.flush();
  publish_counters();
  if (!ok) return ok;
  if (auto dir = check_out_dir(); !dir) {
    dir_gone_ = true;  // the file itself still takes writes: close it properly
    return dir;
  }
  if (auto synced = sync_failure(); !synced) return synced;
  if (auto synced = sync_open(); !synced) return synced;
  return check_disk();
}

// Closes the segment; the next opens at once (`now`: a new channel or key needs a new file) or
// when there is something to write, so a stop right after a rotation leaves no empty file.
core::Result<void> Recorder::rotate(bool now) {
  if (auto dir = check_out_dir(); !dir) {
    dir_gone_ = true;  // the file itself still takes writes: close it properly
    return dir;
  }
  if (auto ok = close_segment(); !ok) return ok;
  if (auto dir = check_out_dir(); !dir) return dir;  // never a new file where the earlier ones are not
  segment_due_ = true;
  if (now || follows_.empty() || something_to_write()) return open_segment();
  return {};
}

bool Recorder::something_to_write() const noexcept {
  return std::any_of(follows_.begin(), follows_.end(), [](const Follow& f) {
    const core::ChannelDesc& d = f.reader.desc();
    return !f.opening.empty() || d.head.load(std::memory_order_acquire) > f.reader.cursor() ||
           d.dropped_at_source.load(std::memory_order_relaxed) != f.dropped_seen;
  });
}

// A file fixes the kind of each key's log when it opens (SWMR adds no dataset later), and a key that
// is still empty gets a numeric one: the parts of a pipeline declare their keys before they write
// them, and an array or a text arriving a moment later would close the first file at once. So when
// followed keys are empty, the first file waits for them to take a value, up to key_wait_ms. Their
// values come from parts that read what the drivers write, and `weir run` starts the drivers once
// its recorders have named their readers (kRecorderKind, otherwise named only once the first file is
// open): so they are named now, and the wait ends when a quarter of any recorded channel's ring is
// unread (the blocks wait in the ring, and the rest of it is left for the file's making: no writer
// waits), at a stop, or when every key has a value.
void Recorder::wait_for_key_types() {
  if (options_.key_wait_ms == 0 || keys_.empty()) return;
  const auto empty = [this](const KeyFollow& k) {
    core::ValueView view;
    const core::KvStatus seen = kv_.view(k.name, view);
    return seen == core::KvStatus::ok && (!view.valid() || view.info().type == core::ValueType::none);
  };
  const auto ring_quarter_full = [this] {
    return std::any_of(follows_.begin(), follows_.end(), [](const Follow& f) {
      const std::uint64_t head = f.reader.desc().head.load(std::memory_order_acquire);
      return head > f.reader.cursor() && 4 * (head - f.reader.cursor()) >= f.info.ring_blocks;
    });
  };
  auto waiting = static_cast<std::size_t>(std::count_if(keys_.begin(), keys_.end(), empty));
  if (waiting == 0) return;
  for (Follow& f : follows_) f.reader.set_kind(kRecorderKind);
  const std::int64_t deadline = monotonic_ns() + std::int64_t{options_.key_wait_ms} * kNsPerMs;
  while (!control_.stop.load(std::memory_order_relaxed) && !ring_quarter_full() && monotonic_ns() < deadline) {
    sleep_ns(std::min(deadline - monotonic_ns(), kKeyTypePollNs));
    waiting = static_cast<std::size_t>(std::count_if(keys_.begin(), keys_.end(), empty));
    if (waiting == 0) return;
  }
  std::string names;
  std::size_t named = 0;
  for (const KeyFollow& k : keys_)
    if (empty(k) && named++ < kKeysNamed) names += (names.empty() ? "" : ", ") + k.name;
  notice(std::to_string(waiting) + " key(s) still empty when the first file opened (" + names +
         (waiting > kKeysNamed ? ", ..." : "") + "; --key-wait-ms " + std::to_string(options_.key_wait_ms) +
         "): an array or text value of one starts a new file");
}

void Recorder::wait(std::int64_t until_ns) {
  const std::int64_t left = std::min(until_ns - monotonic_ns(), kWaitSliceNs);
  if (left <= 0) return;
  if (watcher_)
    (void)watcher_->wait(left);  // woken by any followed channel's publish or key's change
  else
    sleep_ns(std::min(left, kFallbackSleepNs));
}

// A write failed, the disk is full or the output directory is gone: record where each channel
// stopped (a disk_error gap row, if it can still be written) and close the file, keeping what HDF5
// already has. Classifies the fault (full disk: exit 3; else a disk fault: exit 4) with its errno.
void Recorder::stop_on_error(const core::Error& error) {
  stopped_by_ = "error";
  note_fault(error, disk_low_);
  const bool writable = disk_low_ || dir_gone_;  // the reserve or the directory check stopped us: writing works
  for (Follow& f : follows_) {
    f.reader.counters().errors.fetch_add(1, std::memory_order_relaxed);
    const std::uint64_t head = f.reader.desc().head.load(std::memory_order_acquire);
    f.stop_head = head;
    if (f.slot == kNoSlot) {  // between segments: what it did not read is the tail the run record bounds
      const std::uint64_t from = f.reader.cursor();
      f.gap_blocks += head > from ? head - from : 0;
      continue;
    }
    ChannelGroup& g = segment_.channel(f.slot);
    std::uint64_t from = f.reader.cursor();
    if (!writable) from = g.roll_back(from);
    const std::uint64_t missing = head > from ? head - from : 0;
    ++f.gaps;
    f.gap_blocks += missing;
    g.add_gap(GapRow{from, missing, static_cast<std::uint8_t>(GapReason::disk_error), realtime_ns()});
    if (!writable) (void)g.write_gaps();  // best effort; in the writable case close() writes it
  }
  if (!segment_.is_open()) return;
  if (!writable) segment_.roll_back_keys();
  account_segment(writable);
  if (writable) {
    int fd = -1;  // a full disk: the file is synced like any closed one; a gone directory: not worth it
    const bool sync = !dir_gone_ && options_.fsync != FsyncPolicy::never;
    const std::string file = segment_.path().string();
    if (auto ok = segment_.close(realtime_ns(), sync ? &fd : nullptr); !ok) {
      if (fd >= 0) ::close(fd);
      file_blocks_.back().failed = true;
      error_ += "; closing: " + ok.error().what;
    } else if (auto named = finish_name(file, fd, sync); !named) {
      error_ += "; " + named.error().what;
    }
  } else {
    file_blocks_.back().failed = true;  // the driver failed: what reached the disk is not known
    if (auto ok = segment_.abandon(); !ok) error_ += "; closing: " + ok.error().what;
  }
}

void Recorder::run() {
  loop();
  finish_syncs();
  finish_closed_files();
  update_record(true);
}

void Recorder::loop() {
  const std::int64_t begin = monotonic_ns();
  const std::int64_t stop_at = deadline_after(options_.duration_s, begin);
  std::int64_t rotate_at = deadline_after(options_.rotate_s, begin);
  std::int64_t flush_at = begin + std::int64_t{options_.flush_ms} * kNsPerMs;
  std::int64_t discover_at = begin + kDiscoverEveryNs;
  for (;;) {
    if (control_.stop.load(std::memory_order_relaxed)) {
      stopped_by_ = "request";
      break;
    }
    std::int64_t now = monotonic_ns();
    if (now >= stop_at) {
      stopped_by_ = "duration";
      break;
    }
    const bool requested = control_.rotate.exchange(false, std::memory_order_relaxed);  // SIGHUP
    bool new_file = false;  // a new channel or key kind needs a file that holds it: open it at once
    if (key_kind_changed_) {
      key_kind_changed_ = false;
      new_file = true;
      notice("a key took a value its log in this file cannot hold (an array, text, or another number type): a new file logs it");
    }
    if (pv_new_file_) {
      pv_new_file_ = false;
      new_file = true;
      notice("a PV log entry of a PV this file has no log for (listed, or of another type, since it opened): a new file logs it");
    }
    if (options_.controlled) {
      watch_run();
      if (run_finished()) {
        stopped_by_ = "run stop";
        return finish_run();
      }
    }
    if (marks_due_) {
      marks_due_ = false;
      update_record(false);  // a channel's first block of the run: where its ledger begins
    }
    if (now >= discover_at) {
      discover_at = now + kDiscoverEveryNs;
      if (discover()) {
        new_file = true;
        update_record(false);  // the new channel's mark
      }
    }
    const bool anything = !follows_.empty() || !keys_.empty();  // --wait-for-channels: maybe nothing yet
    if (anything && !segment_.is_open() && !segment_due_) new_file = true;  // the first one appeared
    if (segment_due_ && !segment_.is_open() && (new_file || something_to_write())) {
      if (auto ok = open_segment(); !ok) return stop_on_error(ok.error());
      new_file = false;
      rotate_at = deadline_after(options_.rotate_s, now);  // a file's time runs from its opening
    }
    if (anything && (new_file || (segment_.is_open() && (requested || now >= rotate_at)) || size_reached())) {
      if (auto ok = rotate(new_file); !ok) return stop_on_error(ok.error());
      rotate_at = deadline_after(options_.rotate_s, now);
    }
    std::uint64_t work = 0;
    for (Follow& f : follows_) {
      auto n = pump(f, blocks_before_size(f), kDrainAll);
      if (!n) return stop_on_error(n.error());
      work += *n;
    }
    if (auto ok = sample_keys(); !ok) return stop_on_error(ok.error());
    if (reserve_bytes_ > 0 && segment_.is_open() &&
        segment_.bytes() >= checked_file_bytes_ + std::max(reserve_bytes_ / 4, kCheckDiskEveryBytes))
      if (auto ok = check_disk(); !ok) return stop_on_error(ok.error());
    now = monotonic_ns();
    if (now >= flush_at) {
      flush_at = now + std::int64_t{options_.flush_ms} * kNsPerMs;
      if (auto ok = flush(); !ok) return stop_on_error(ok.error());
    }
    if (work == 0 && !size_reached()) wait(std::min({flush_at, discover_at, stop_at, rotate_at}));
  }
  drain_and_close();
}

// Rotation by size: an uncompressed file rotates once its committed payload (data, time, table and
// gap rows) reaches --rotate-mb, so each file holds the same whole number of blocks whatever the
// flushes did; a compressed one once the file (or what HDF5 was handed) is that large.
bool Recorder::size_reached() const noexcept {
  if (options_.rotate_bytes == 0 || !segment_.is_open()) return false;
  const std::uint64_t size = segment_.compressed() ? segment_.bytes() : segment_.committed_bytes();
  return size >= options_.rotate_bytes;
}

// Blocks of `f` to read this turn: kBlocksPerTurn, or fewer so an uncompressed file stops at the
// block that reaches the rotation size (the next turn rotates first).
std::uint64_t Recorder::blocks_before_size(const Follow& f) const noexcept {
  if (options_.rotate_bytes == 0 || f.slot == kNoSlot || segment_.compressed()) return kBlocksPerTurn;
  const std::uint64_t size = segment_.committed_bytes();
  if (size >= options_.rotate_bytes) return 0;
  const std::uint64_t block = std::max<std::uint64_t>(1, segment_.channel(f.slot).block_bytes());
  return std::min<std::uint64_t>(kBlocksPerTurn, (options_.rotate_bytes - size + block - 1) / block);
}

// PV log entries the open file could not log are carried: a new file logs them before a stop (a
// PV's type that changed again in the meantime may take one more).
core::Result<void> Recorder::log_carried() {
  const auto carried = [this] {
    return std::any_of(follows_.begin(), follows_.end(),
                       [](const Follow& f) { return f.pv_log && !f.pv_log->carried.empty(); });
  };
  for (int tries = 0; tries < kCarriedFilesAtStop && pv_new_file_ && segment_.is_open() && carried(); ++tries) {
    pv_new_file_ = false;
    if (auto ok = rotate(true); !ok) return ok;
  }
  return {};
}

// Writes every block published so far (opening the due segment when there is one to write).
core::Result<void> Recorder::drain() {
  if (segment_due_ && !segment_.is_open() && something_to_write())
    if (auto ok = open_segment(); !ok) return ok;
  for (Follow& f : follows_) {
    const std::uint64_t until = f.reader.desc().head.load(std::memory_order_acquire);
    for (;;) {
      auto n = pump(f, kDrainAll, until);
      if (!n) return tl::make_unexpected(n.error());
      if (*n == 0) break;
    }
  }
  return log_carried();
}

// At a stop, after a drain: whether a followed channel's writer process is still alive and published
// within kWriterQuietNs (its own stop may be under way: what it publishes before it ends belongs to
// the run). Sleeps on the watcher until a publish, the quiet time or `deadline`; never spins.
bool Recorder::writers_publishing(std::int64_t deadline) {
  const auto heads = [this] {
    std::uint64_t sum = 0;
    for (const Follow& f : follows_) sum += f.reader.desc().head.load(std::memory_order_acquire);
    return sum;
  };
  const bool alive = std::any_of(follows_.begin(), follows_.end(), [](const Follow& f) {
    const std::uint32_t pid = f.reader.desc().writer_pid.load(std::memory_order_acquire);
    return pid != 0 && core::pid_alive(pid);
  });
  const std::int64_t now = monotonic_ns();
  if (!alive || now >= deadline) return false;
  const std::uint64_t before = heads();
  const std::int64_t until = std::min(deadline, now + kWriterQuietNs);
  while (heads() == before && monotonic_ns() < until) wait(until);
  return heads() != before;
}

// A clean stop: every block published before the stop is written, and those the channels' writers
// publish while they stop too (bounded by kStopWaitNs), then stop_time, then close. Blocks published
// after that are a `shutdown` row.
void Recorder::drain_and_close() {
  if (auto ok = drain(); !ok) return stop_on_error(ok.error());
  const std::int64_t deadline = monotonic_ns() + kStopWaitNs;
  while (writers_publishing(deadline))
    if (auto ok = drain(); !ok) return stop_on_error(ok.error());
  for (Follow& f : follows_) {
    const std::uint64_t head = f.reader.desc().head.load(std::memory_order_acquire);
    f.stop_head = head;
    if (f.slot != kNoSlot && head > f.reader.cursor())
      if (auto ok = add_gap(f, f.reader.cursor(), head - f.reader.cursor(), GapReason::shutdown); !ok)
        return stop_on_error(ok.error());
  }
  close_last_segment();
}

// A stop's end: the keys' last values, the counters, and the open file closed (a failure to close is
// the stop's fault).
void Recorder::close_last_segment() {
  if (auto ok = sample_keys(); !ok) return stop_on_error(ok.error());
  publish_counters();
  if (auto ok = close_segment(); !ok) {
    stopped_by_ = "error";
    note_fault(ok.error(), false);
  }
  publish_counters();
}

// The summary counts what the files that are still there hold: a file whose directory vanished or
// whose filesystem went away, or whose close failed on a disk fault, is counted aside.
RecordSummary Recorder::summary() const {
  RecordSummary s;
  s.run = run_;
  s.stopped_by = stopped_by_;
  s.error = error_;
  s.disk_full = disk_full_;
  s.disk_fault = disk_fault_;
  s.error_number = fault_errno_;
  std::vector<std::uint64_t> lost_blocks(follows_.size(), 0), lost_samples(follows_.size(), 0);
  for (std::size_t i = 0; i < files_.size(); ++i) {
    const FileBlocks& held = file_blocks_[i];
    std::string file = files_[i];  // its final name; NAME.partial where it could not be renamed
    if (std::error_code ec; !std::filesystem::exists(file, ec) && std::filesystem::exists(partial_path(file), ec))
      file = partial_path(file).string();
    if (!held.failed && reachable(file, held.synced)) {
      s.files.push_back(file);
      std::error_code ec;
      const auto size = std::filesystem::file_size(file, ec);
      if (!ec) s.bytes += size;
      continue;
    }
    for (std::size_t c = 0; c < held.blocks.size() && c < follows_.size(); ++c) {
      lost_blocks[c] += held.blocks[c];
      lost_samples[c] += held.samples[c];
      s.unreachable_blocks += held.blocks[c];
    }
  }
  for (std::size_t i = 0; i < follows_.size(); ++i) {
    const Follow& f = follows_[i];
    ChannelSummary c;
    c.name = f.info.name;
    c.blocks = f.done_blocks - std::min(f.done_blocks, lost_blocks[i]);
    c.samples = f.done_samples - std::min(f.done_samples, lost_samples[i]);
    c.bytes = c.samples * f.info.sample_bytes;
    c.gaps = f.gaps;
    c.gap_blocks = f.gap_blocks;
    s.blocks += c.blocks;
    s.samples += c.samples;
    s.gaps += c.gaps;
    s.gap_blocks += c.gap_blocks;
    s.channels.push_back(std::move(c));
  }
  return s;
}

}  // namespace weir::rec

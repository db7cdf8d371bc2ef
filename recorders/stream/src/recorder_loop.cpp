// The recorder's loop: read blocks in place, stage them, write whole chunks, flush on a timer,
// rotate, and stop cleanly or on a write failure.
#include <time.h>

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
constexpr double kNsPerSecond = 1e9;
constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kFallbackSleepNs = kWaitSliceNs / 5;  // no watcher: look for blocks this often
constexpr std::uint64_t kDrainAll = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint64_t kCheckDiskEveryBytes = 1 << 20;  // free space is looked at no more often than this

void sleep_ns(std::int64_t ns) noexcept {
  if (ns <= 0) return;
  const timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
  nanosleep(&ts, nullptr);
}

std::int64_t deadline_after(double seconds, std::int64_t from) noexcept {
  if (seconds <= 0) return kNever;
  return from + static_cast<std::int64_t>(std::llround(seconds * kNsPerSecond));
}

}  // namespace

core::Result<void> Recorder::add_gap(Follow& f, std::uint64_t sequence, std::uint64_t blocks, GapReason reason) {
  if (blocks == 0 && reason != GapReason::disk_error) return {};
  ++f.gaps;
  f.gap_blocks += blocks;
  if (f.slot == kNoSlot) return {};
  ChannelGroup& g = segment_.channel(f.slot);
  g.add_gap(GapRow{sequence, blocks, static_cast<std::uint8_t>(reason), realtime_ns()});
  if (g.pending()) return g.write_pending();
  return {};
}

// Reads up to `limit` blocks of one channel, or until its cursor reaches `until`.
core::Result<std::uint64_t> Recorder::pump(Follow& f, std::uint64_t limit, std::uint64_t until) {
  if (f.slot == kNoSlot) return 0;
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
      if (auto ok = add_gap(f, at, lost, f.read_any ? GapReason::lapped : f.first_loss); !ok)
        return tl::make_unexpected(ok.error());
      f.read_any = true;
      continue;
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
    if (g.pending())
      if (auto ok = g.write_pending(); !ok) return tl::make_unexpected(ok.error());
    if (options_.throttle_us > 0) sleep_ns(std::int64_t{options_.throttle_us} * kNsPerUs);
  }
  return work;
}

core::Result<void> Recorder::sample_keys() {
  if (!segment_.is_open()) return {};
  const std::uint64_t now = realtime_ns();
  const double t = static_cast<double>(now - std::min(now, segment_.start_ns())) / kNsPerSecond;
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
    k.last_epoch = info.epoch;
    k.logged = true;
    KeyLog& log = segment_.key(k.slot);
    const std::span<const std::byte> bytes(k.buffer.data(), info.length);
    if (log.is_array()) {  // a value of another type or shape is refused, and counted
      auto logged = log.add_array(t, info.type == core::ValueType::array ? info.array : core::ArrayShape{}, bytes);
      if (!logged) return tl::make_unexpected(logged.error());
      if (!*logged && log.refused() == 1)
        notice("key '" + k.name + "': its dtype or shape changed; not logged until the next file");
      if (log.pending())
        if (auto ok = log.write_pending(); !ok) return ok;
      continue;
    }
    // An array value in a plain log, or the first text of a key that was empty when the file opened
    // (its log is numeric): the right dataset can only be made in a new file, which logs the value.
    const bool is_text = info.type == core::ValueType::text || info.type == core::ValueType::bytes;
    if (info.type == core::ValueType::array || (is_text && log.numeric() && k.empty_at_open)) {
      key_kind_changed_ = true;
      continue;
    }
    k.empty_at_open = false;
    double number = std::numeric_limits<double>::quiet_NaN();
    std::uint64_t word = 0;
    std::memcpy(&word, k.buffer.data(), std::min<std::size_t>(sizeof word, info.length));
    const bool is_number = info.type == core::ValueType::i64 || info.type == core::ValueType::u64 ||
                           info.type == core::ValueType::f64;
    if (info.type == core::ValueType::i64) number = static_cast<double>(std::bit_cast<std::int64_t>(word));
    if (info.type == core::ValueType::u64) number = static_cast<double>(word);
    if (info.type == core::ValueType::f64) number = std::bit_cast<double>(word);
    if (log.numeric()) {
      if (!is_number) {  // a text value in a numeric log: its number if it is one
        const auto* text = reinterpret_cast<const char*>(bytes.data());
        double parsed = 0;
        const auto [end, ec] = std::from_chars(text, text + bytes.size(), parsed);
        if (ec == std::errc{} && end == text + bytes.size()) number = parsed;
      }
      log.add_number(t, number);
    } else if (is_number) {
      char text[32];
      const auto [end, ec] = std::to_chars(text, text + sizeof text, number);
      log.add_text(t, std::as_bytes(std::span<const char>(text, ec == std::errc{} ? end : text)));
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
}

core::Result<void> Recorder::check_disk() {
  checked_file_bytes_ = segment_.bytes();
  if (reserve_bytes_ == 0) return {};  // --min-free-mb 0: HDF5's own write errors are the only check
  auto free = free_bytes(target_.dir);
  if (!free) return tl::make_unexpected(free.error());
  if (*free >= reserve_bytes_) return {};
  disk_low_ = true;
  return core::fail(core::Errc::io_error, "disk full: " + std::to_string(*free) + " bytes free in " +
                                              target_.dir.string() + ", below the " + std::to_string(reserve_bytes_) +
                                              " bytes kept to close " + segment_.path().string() + " cleanly");
}

core::Result<void> Recorder::flush() {
  if (!segment_.is_open()) return {};
  auto ok = segment_.flush();
  publish_counters();
  if (!ok) return ok;
  return check_disk();
}

core::Result<void> Recorder::rotate() {
  if (auto ok = close_segment(); !ok) return ok;
  return open_segment();
}

void Recorder::wait(std::int64_t until_ns) {
  const std::int64_t left = std::min(until_ns - monotonic_ns(), kWaitSliceNs);
  if (left <= 0) return;
  if (watcher_)
    (void)watcher_->wait(left);  // woken by any followed channel's publish or key's change
  else
    sleep_ns(std::min(left, kFallbackSleepNs));
}

// A write failed or the disk is full: record where each channel stopped (a disk_error gap row,
// if it can still be written) and close the file, keeping what HDF5 already has.
void Recorder::stop_on_error(const core::Error& error) {
  stopped_by_ = "error";
  error_ = error.what;
  const bool disk_full = disk_low_;  // the reserve check stopped us: writing still works
  for (Follow& f : follows_) {
    f.reader.counters().errors.fetch_add(1, std::memory_order_relaxed);
    if (f.slot == kNoSlot) continue;
    ChannelGroup& g = segment_.channel(f.slot);
    std::uint64_t from = f.reader.cursor();
    if (!disk_full) from = g.roll_back(from);
    const std::uint64_t head = f.reader.desc().head.load(std::memory_order_acquire);
    const std::uint64_t missing = head > from ? head - from : 0;
    ++f.gaps;
    f.gap_blocks += missing;
    g.add_gap(GapRow{from, missing, static_cast<std::uint8_t>(GapReason::disk_error), realtime_ns()});
    if (!disk_full) (void)g.write_gaps();  // best effort; in the disk_full case close() writes it
  }
  if (!disk_full) segment_.roll_back_keys();
  account_segment(disk_full);
  if (disk_full) {
    if (auto ok = segment_.close(realtime_ns()); !ok) error_ += "; closing: " + ok.error().what;
  } else if (auto ok = segment_.abandon(); !ok) {
    error_ += "; closing: " + ok.error().what;
  }
}

void Recorder::run() {
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
    bool rotate_now = control_.rotate.exchange(false, std::memory_order_relaxed);
    if (key_kind_changed_) {
      key_kind_changed_ = false;
      rotate_now = true;
      notice("a key took an array or text value its log in this file cannot hold: a new file logs it");
    }
    if (now >= discover_at) {
      discover_at = now + kDiscoverEveryNs;
      if (discover()) rotate_now = true;
    }
    const bool anything = !follows_.empty() || !keys_.empty();  // --wait-for-channels: maybe nothing yet
    if (anything && !segment_.is_open()) rotate_now = true;          // the first one appeared
    if (anything && (rotate_now || now >= rotate_at ||
                     (options_.rotate_bytes > 0 && segment_.bytes() >= options_.rotate_bytes))) {
      if (auto ok = rotate(); !ok) return stop_on_error(ok.error());
      rotate_at = deadline_after(options_.rotate_s, now);
    }
    std::uint64_t work = 0;
    for (Follow& f : follows_) {
      auto n = pump(f, kBlocksPerTurn, kDrainAll);
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
    if (work == 0) wait(std::min({flush_at, discover_at, stop_at, rotate_at}));
  }
  drain_and_close();
}

// A clean stop: every block published before the stop is written, then stop_time, then close.
void Recorder::drain_and_close() {
  for (Follow& f : follows_) {
    const std::uint64_t until = f.reader.desc().head.load(std::memory_order_acquire);
    for (;;) {
      auto n = pump(f, kDrainAll, until);
      if (!n) return stop_on_error(n.error());
      if (*n == 0) break;
    }
  }
  if (auto ok = sample_keys(); !ok) return stop_on_error(ok.error());
  publish_counters();
  if (auto ok = close_segment(); !ok) {
    stopped_by_ = "error";
    error_ = ok.error().what;
  }
  publish_counters();
}

RecordSummary Recorder::summary() const {
  RecordSummary s;
  s.run = run_;
  s.files = files_;
  s.stopped_by = stopped_by_;
  s.error = error_;
  for (const Follow& f : follows_) {
    ChannelSummary c;
    c.name = f.info.name;
    c.blocks = f.done_blocks;
    c.samples = f.done_samples;
    c.bytes = f.done_samples * f.info.sample_bytes;
    c.gaps = f.gaps;
    c.gap_blocks = f.gap_blocks;
    s.blocks += c.blocks;
    s.samples += c.samples;
    s.gaps += c.gaps;
    s.gap_blocks += c.gap_blocks;
    s.channels.push_back(std::move(c));
  }
  for (const std::string& file : files_) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(file, ec);
    if (!ec) s.bytes += size;
  }
  return s;
}

}  // namespace weir::rec

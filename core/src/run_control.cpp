// The run state machine in the arena header: a seqlock word serializes transitions (and names the
// holder while odd), the fields are written only while it is odd, and readers copy them between two
// equal even reads. A futex on `changes` wakes whoever waits for a transition.
#include "weir/core/run_control.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "weir/core/clock.hpp"
#include "weir/core/detail/seqlock.hpp"

namespace weir::core {

namespace {

constexpr int kReadAttempts = 10'000;          // torn status copies retried before the last one is taken
constexpr std::int64_t kLockPollNs = 200'000;  // a transition waiting for another looks again this often

long run_futex(std::atomic<std::uint32_t>* word, int op, std::uint32_t value, const timespec* timeout) noexcept {
  return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), op, value, timeout, nullptr, 0);
}

void run_sleep_ns(std::int64_t ns) noexcept {
  const timespec ts{static_cast<time_t>(ns / kNsPerSecond), static_cast<long>(ns % kNsPerSecond)};
  nanosleep(&ts, nullptr);
}

// A zero-padded text field: the bytes up to the first zero.
std::string field_text(const char* field, std::size_t bytes) {
  char copy[kRunDirBytes];
  detail::seqlock_copy_out(copy, field, bytes);
  return std::string(copy, std::find(copy, copy + bytes, '\0'));
}

void put_field(char* field, std::size_t bytes, std::string_view text) noexcept {
  char padded[kRunDirBytes] = {};
  std::memcpy(padded, text.data(), std::min(bytes, text.size()));
  detail::seqlock_copy_in(field, padded, bytes);
}

// Valid UTF-8 (no overlongs, surrogates or code points past U+10FFFF); the offset of the first bad
// byte, or npos.
std::size_t bad_utf8_at(std::string_view s) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  for (std::size_t i = 0; i < n;) {
    const unsigned c = p[i];
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    }
    if ((c & 0xE0) == 0xC0) len = 2, cp = c & 0x1F;
    else if ((c & 0xF0) == 0xE0) len = 3, cp = c & 0x0F;
    else if ((c & 0xF8) == 0xF0) len = 4, cp = c & 0x07;
    else return i;
    if (i + len > n) return i;
    for (std::size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return i;
      cp = cp << 6 | (p[i + k] & 0x3F);
    }
    const std::uint32_t least = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
    if (cp < least || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += len;
  }
  return std::string_view::npos;
}

Result<void> check_field(std::string_view name, std::string_view text, std::size_t limit) {
  if (text.size() > limit)
    return fail(Errc::invalid_argument, "run " + std::string(name) + ": " + std::to_string(text.size()) +
                                            " bytes, longer than the " + std::to_string(limit) + " bytes it may hold");
  if (const std::size_t at = bad_utf8_at(text); at != std::string_view::npos)
    return fail(Errc::invalid_argument,
                "run " + std::string(name) + ": not UTF-8 text (a bad byte at offset " + std::to_string(at) + ")");
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7F)
      return fail(Errc::invalid_argument, "run " + std::string(name) + ": a control character (" +
                                              std::to_string(c) + ") at offset " + std::to_string(i));
  }
  return {};
}

std::string describe_run(const RunStatus& s) {
  return "run " + std::to_string(s.number) + " (started by " + (s.door.empty() ? "?" : s.door) + ")";
}

// Every field as it is: consistent while the caller holds the word, or between two equal even reads.
RunStatus fields(const RunControlBlock& b) {
  RunStatus s;
  s.state = static_cast<RunState>(b.state.load(std::memory_order_relaxed));
  s.number = b.number.load(std::memory_order_relaxed);
  s.highest = b.highest.load(std::memory_order_relaxed);
  s.start_ns = b.start_ns.load(std::memory_order_relaxed);
  s.stop_ns = b.stop_ns.load(std::memory_order_relaxed);
  s.ended = static_cast<RunEnd>(b.ended.load(std::memory_order_relaxed));
  s.transitions = b.transitions.load(std::memory_order_relaxed);
  s.changes = b.changes.load(std::memory_order_relaxed);
  s.door = field_text(b.door, kRunDoorBytes);
  s.meta.title = field_text(b.title, kRunTitleBytes);
  s.meta.operator_name = field_text(b.operator_name, kRunOperatorBytes);
  s.meta.sample = field_text(b.sample, kRunSampleBytes);
  s.meta.comment = field_text(b.comment, kRunCommentBytes);
  s.dir = field_text(b.dir, kRunDirBytes);
  return s;
}

}  // namespace

std::string_view run_state_name(RunState state) noexcept {
  return state == RunState::running ? "running" : "idle";
}

std::string_view run_end_name(RunEnd end) noexcept {
  switch (end) {
    case RunEnd::none: return "";
    case RunEnd::stopped: return "stopped";
    case RunEnd::aborted: return "aborted";
    case RunEnd::interrupted: return "interrupted";
  }
  return "";
}

Result<void> check_run_meta(const RunMeta& m) {
  if (auto ok = check_field("title", m.title, kRunTitleBytes); !ok) return ok;
  if (auto ok = check_field("operator", m.operator_name, kRunOperatorBytes); !ok) return ok;
  if (auto ok = check_field("sample", m.sample, kRunSampleBytes); !ok) return ok;
  return check_field("comment", m.comment, kRunCommentBytes);
}

RunControl::RunControl(const Arena& arena) noexcept : block_(&arena.header().run) {}

RunStatus RunControl::status() const {
  RunStatus s;
  for (int attempt = 0; attempt < kReadAttempts; ++attempt) {
    const std::uint64_t before = block_->word.load(std::memory_order_acquire);
    if (epoch_odd(before)) {
      if (attempt > 64) run_sleep_ns(kLockPollNs / 4);
      continue;
    }
    s = fields(*block_);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (block_->word.load(std::memory_order_relaxed) == before) return s;
  }
  return s;  // a holder that never finishes: the last copy (lock() takes it over once it is dead)
}

Result<std::uint64_t> RunControl::lock() const {
  const std::uint32_t self = static_cast<std::uint32_t>(getpid());
  const std::int64_t deadline = monotonic_ns() + kRunLockWaitNs;
  for (;;) {
    std::uint64_t word = block_->word.load(std::memory_order_acquire);
    if (!epoch_odd(word)) {
      const std::uint64_t claimed = epoch_claimed(word, self);
      if (block_->word.compare_exchange_weak(word, claimed, std::memory_order_acq_rel)) return claimed;
      continue;
    }
    const std::uint32_t owner = epoch_owner(word);
    if (owner != self && !pid_alive(owner)) {  // its holder died mid-transition: take it over
      const std::uint64_t claimed = epoch_claimed(epoch_released(word), self) ;
      if (block_->word.compare_exchange_strong(word, claimed, std::memory_order_acq_rel)) return claimed;
      continue;
    }
    if (monotonic_ns() >= deadline)
      return fail(Errc::busy, "the run control is held by pid " + std::to_string(owner) + " for more than " +
                                  std::to_string(kRunLockWaitNs / kNsPerMs) + " ms");
    run_sleep_ns(kLockPollNs);
  }
}

void RunControl::unlock(std::uint64_t claimed) const noexcept {
  block_->word.store(epoch_released(claimed), std::memory_order_release);
}

namespace {

void announce(RunControlBlock& b) noexcept {
  b.changes.fetch_add(1, std::memory_order_release);
  run_futex(&b.changes, FUTEX_WAKE, INT_MAX, nullptr);
}

}  // namespace

Result<RunStatus> RunControl::start(const RunMeta& meta, std::string_view door, const RunNumberAllocator& allocate) {
  if (auto ok = check_run_meta(meta); !ok) return tl::make_unexpected(ok.error());
  auto claimed = lock();
  if (!claimed) return tl::make_unexpected(claimed.error());
  RunControlBlock& b = *block_;
  if (static_cast<RunState>(b.state.load(std::memory_order_relaxed)) == RunState::running) {
    RunStatus now;
    now.number = b.number.load(std::memory_order_relaxed);
    now.door = field_text(b.door, kRunDoorBytes);
    unlock(*claimed);
    return fail(Errc::conflict, "start refused: " + describe_run(now) + " is running; stop or abort it first");
  }
  const std::uint64_t highest = b.highest.load(std::memory_order_relaxed);
  auto number = allocate ? allocate(highest) : Result<std::uint64_t>(highest + 1);
  if (!number) {
    unlock(*claimed);
    return tl::make_unexpected(number.error());
  }
  if (*number <= highest) {
    unlock(*claimed);
    return fail(Errc::conflict, "start refused: run number " + std::to_string(*number) +
                                    " is not above the highest this arena has run (" + std::to_string(highest) + ")");
  }
  b.number.store(*number, std::memory_order_relaxed);
  b.highest.store(*number, std::memory_order_relaxed);
  // A run begins no earlier than the last one's stop (a stop may be set ahead: RunControl::stop).
  b.start_ns.store(std::max(realtime_ns(), b.stop_ns.load(std::memory_order_relaxed)), std::memory_order_relaxed);
  b.ended.store(static_cast<std::uint32_t>(RunEnd::none), std::memory_order_relaxed);
  put_field(b.door, kRunDoorBytes, door);
  put_field(b.title, kRunTitleBytes, meta.title);
  put_field(b.operator_name, kRunOperatorBytes, meta.operator_name);
  put_field(b.sample, kRunSampleBytes, meta.sample);
  put_field(b.comment, kRunCommentBytes, meta.comment);
  b.transitions.fetch_add(1, std::memory_order_relaxed);
  b.state.store(static_cast<std::uint32_t>(RunState::running), std::memory_order_relaxed);
  RunStatus made = fields(b);  // as this transition left it: another may follow at once
  unlock(*claimed);
  announce(b);
  made.changes += 1;
  return made;
}

Result<RunStatus> RunControl::stop(std::string_view door, RunEnd how, std::uint64_t expect, std::int64_t at_ns) {
  if (how != RunEnd::stopped && how != RunEnd::aborted)
    return fail(Errc::invalid_argument, "a door stops or aborts a run");
  auto claimed = lock();
  if (!claimed) return tl::make_unexpected(claimed.error());
  RunControlBlock& b = *block_;
  const std::uint64_t number = b.number.load(std::memory_order_relaxed);
  const std::string verb = how == RunEnd::aborted ? "abort" : "stop";
  if (static_cast<RunState>(b.state.load(std::memory_order_relaxed)) != RunState::running) {
    const auto ended = static_cast<RunEnd>(b.ended.load(std::memory_order_relaxed));
    const std::string last = field_text(b.door, kRunDoorBytes);
    unlock(*claimed);
    return fail(Errc::conflict, verb + " refused: no run is running" +
                                    (number == 0 ? std::string(" (none has run in this arena)")
                                                 : " (run " + std::to_string(number) + " was " +
                                                       std::string(run_end_name(ended)) + " by " + last + ")"));
  }
  if (expect != 0 && expect != number) {
    const std::string by = field_text(b.door, kRunDoorBytes);
    unlock(*claimed);
    return fail(Errc::conflict, verb + " of run " + std::to_string(expect) + " refused: run " +
                                    std::to_string(number) + " (started by " + by + ") is the one running");
  }
  const std::int64_t now = realtime_ns();
  const std::int64_t started = b.start_ns.load(std::memory_order_relaxed);
  if (at_ns != 0 && (at_ns < started || at_ns > now + kRunStopAheadNs)) {
    unlock(*claimed);
    return fail(Errc::invalid_argument, verb + " of run " + std::to_string(number) + " at " + std::to_string(at_ns) +
                                            " ns refused: a stop lies between the run's start and " +
                                            std::to_string(kRunStopAheadNs / kNsPerSecond) + " s from now");
  }
  b.stop_ns.store(at_ns != 0 ? at_ns : now, std::memory_order_relaxed);
  b.ended.store(static_cast<std::uint32_t>(how), std::memory_order_relaxed);
  put_field(b.door, kRunDoorBytes, door);
  b.transitions.fetch_add(1, std::memory_order_relaxed);
  b.state.store(static_cast<std::uint32_t>(RunState::idle), std::memory_order_relaxed);
  RunStatus made = fields(b);  // the run just ended, whatever a door does next
  unlock(*claimed);
  announce(b);
  made.changes += 1;
  return made;
}

Result<void> RunControl::set_dir(std::string_view dir) {
  if (dir.empty() || dir.size() >= kRunDirBytes)
    return fail(Errc::invalid_argument, "run directory '" + std::string(dir) + "': 1 to " +
                                            std::to_string(kRunDirBytes - 1) + " bytes");
  auto claimed = lock();
  if (!claimed) return tl::make_unexpected(claimed.error());
  RunControlBlock& b = *block_;
  const std::string now = field_text(b.dir, kRunDirBytes);
  if (now != dir && static_cast<RunState>(b.state.load(std::memory_order_relaxed)) == RunState::running) {
    unlock(*claimed);
    return fail(Errc::conflict, "run directory '" + std::string(dir) + "' refused: run " +
                                    std::to_string(b.number.load(std::memory_order_relaxed)) + " is running with '" +
                                    now + "'");
  }
  put_field(b.dir, kRunDirBytes, dir);
  unlock(*claimed);
  return {};
}

std::uint32_t RunControl::changes() const noexcept { return block_->changes.load(std::memory_order_acquire); }

std::uint32_t RunControl::wait(std::uint32_t seen, std::int64_t timeout_ns) const noexcept {
  const std::int64_t deadline = monotonic_ns() + std::max<std::int64_t>(timeout_ns, 0);
  for (;;) {
    const std::uint32_t now = block_->changes.load(std::memory_order_acquire);
    const std::int64_t left = deadline - monotonic_ns();
    if (now != seen || left <= 0) return now;
    const timespec ts{static_cast<time_t>(left / kNsPerSecond), static_cast<long>(left % kNsPerSecond)};
    run_futex(&block_->changes, FUTEX_WAIT, seen, &ts);
  }
}

Result<std::uint32_t> RunControl::join_recorder() const {
  const auto self = static_cast<std::uint32_t>(getpid());
  for (int pass = 0; pass < 2; ++pass)
    for (std::uint32_t i = 0; i < kRunRecorderRows; ++i) {
      RunRecorderRow& row = block_->recorders[i];
      std::uint32_t pid = row.pid.load(std::memory_order_acquire);
      if (pass == 1 && pid != 0 && pid != self && !pid_alive(pid)) {  // a dead recorder's row
        if (!row.pid.compare_exchange_strong(pid, 0, std::memory_order_acq_rel)) continue;
        pid = 0;
      }
      if (pid != 0) continue;
      if (!row.pid.compare_exchange_strong(pid, self, std::memory_order_acq_rel)) continue;
      row.open_run.store(0, std::memory_order_relaxed);
      row.closed_run.store(0, std::memory_order_relaxed);
      row.first_block_ns.store(0, std::memory_order_relaxed);
      row.closed_ns.store(0, std::memory_order_release);
      return i;
    }
  return fail(Errc::busy, "no free recorder row in the run control: " + std::to_string(kRunRecorderRows) +
                              " live recorders hold them all");
}

void RunControl::leave_recorder(std::uint32_t row) const noexcept {
  if (row < kRunRecorderRows) block_->recorders[row].pid.store(0, std::memory_order_release);
}

void RunControl::recorder_open(std::uint32_t row, std::uint64_t number, std::int64_t first_block_ns) const noexcept {
  if (row >= kRunRecorderRows) return;
  RunRecorderRow& r = block_->recorders[row];
  r.first_block_ns.store(static_cast<std::uint64_t>(first_block_ns), std::memory_order_relaxed);
  r.open_run.store(number, std::memory_order_release);
}

void RunControl::recorder_closed(std::uint32_t row, std::uint64_t number) const noexcept {
  if (row >= kRunRecorderRows) return;
  RunRecorderRow& r = block_->recorders[row];
  r.closed_ns.store(static_cast<std::uint64_t>(realtime_ns()), std::memory_order_relaxed);
  r.open_run.store(0, std::memory_order_relaxed);
  r.closed_run.store(number, std::memory_order_release);
  announce(*block_);  // a stop waiting for the files wakes
}

std::vector<RunRecorderSeen> RunControl::recorders() const {
  std::vector<RunRecorderSeen> out;
  for (std::uint32_t i = 0; i < kRunRecorderRows; ++i) {
    const RunRecorderRow& r = block_->recorders[i];
    const std::uint32_t pid = r.pid.load(std::memory_order_acquire);
    if (pid == 0) continue;
    RunRecorderSeen s;
    s.row = i;
    s.pid = pid;
    s.alive = pid_alive(pid);
    s.open_run = r.open_run.load(std::memory_order_acquire);
    s.closed_run = r.closed_run.load(std::memory_order_acquire);
    s.first_block_ns = static_cast<std::int64_t>(r.first_block_ns.load(std::memory_order_relaxed));
    s.closed_ns = static_cast<std::int64_t>(r.closed_ns.load(std::memory_order_relaxed));
    out.push_back(s);
  }
  return out;
}

}  // namespace weir::core

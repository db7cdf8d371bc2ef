// One writer and one reader in two processes: this process writes a 64 B value while a forked
// child reads it, on the KV store (the child attaches the arena by name) and on the bare seqlock.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <span>

#include "bare_seqlock.hpp"
#include "cases.hpp"
#include "child_process.hpp"

namespace weir::bench {

namespace {

constexpr std::int64_t kChildStartTimeoutNs = 5'000'000'000;   // child attach and set-up, or one go signal
constexpr std::int64_t kChildResultTimeoutNs = 5'000'000'000;  // a repetition's result after stop
constexpr std::int64_t kChildExitTimeoutNs = 2'000'000'000;    // child exit after its last result
constexpr std::int64_t kWriteGapNs = 1'000;                    // the writer publishes about once per microsecond
constexpr std::uint32_t kWarmupReps = 1;                       // first repetitions, not reported
constexpr int kChildSetupFailed = 3;                           // child exit codes
constexpr int kChildTimedOut = 4;
constexpr int kChildPipeFailed = 5;
constexpr int kChildThrew = 6;
constexpr std::string_view kXprocKey = "xproc.000";

struct Control {  // in a MAP_SHARED mapping made before fork
  alignas(core::kCacheLine) std::atomic<std::uint32_t> ready{0};  // child: set up, waiting for go
  alignas(core::kCacheLine) std::atomic<std::uint32_t> go{0};     // parent: repetition `go` has begun
  alignas(core::kCacheLine) std::atomic<std::uint32_t> stop{0};   // parent: repetition `stop` has ended
};

struct RepResult {  // child to parent, one per repetition, in one write() well under PIPE_BUF
  std::int64_t elapsed_ns = 0;
  std::uint64_t reads = 0;
  std::uint64_t busy = 0;
  std::uint64_t torn = 0;      // ok reads whose words disagree: a broken seqlock
  std::uint64_t failures = 0;  // reads with any other unexpected status
};

enum class ReadOutcome : std::uint8_t { ok, busy, failed };

constexpr std::size_t kWords = kSmallBytes / sizeof(std::uint64_t);

// The value is kWords copies of one word, so a torn read shows as words that differ.
void fill_words(std::byte* dst, std::uint64_t word) noexcept {
  for (std::size_t w = 0; w < kWords; ++w) std::memcpy(dst + w * sizeof word, &word, sizeof word);
}

bool words_agree(const std::byte* src) noexcept {
  std::uint64_t first = 0;
  std::memcpy(&first, src, sizeof first);
  for (std::size_t w = 1; w < kWords; ++w) {
    std::uint64_t word = 0;
    std::memcpy(&word, src + w * sizeof word, sizeof word);
    if (word != first) return false;
  }
  return true;
}

// The control words are flags only: the data they announce travels through the arena or the pipe,
// which order themselves, so relaxed loads and stores suffice below.
template <class Read>
int reader_loop(Control& control, int fd, std::uint32_t total_reps, Read& read) noexcept {
  alignas(core::kCacheLine) std::array<std::byte, kSmallBytes> out{};
  const pid_t parent = ::getppid();
  control.ready.store(1, std::memory_order_relaxed);
  for (std::uint32_t rep = 1; rep <= total_reps; ++rep) {
    const std::int64_t deadline_ns = core::monotonic_ns() + kChildStartTimeoutNs;
    while (control.go.load(std::memory_order_relaxed) < rep) {
      if (core::monotonic_ns() > deadline_ns || ::getppid() != parent) return kChildTimedOut;
      cpu_relax();
    }
    RepResult r;
    const std::int64_t start_ns = core::monotonic_ns();
    for (;;) {
      const ReadOutcome outcome = read(out.data());
      r.torn += outcome == ReadOutcome::ok && !words_agree(out.data()) ? 1U : 0U;
      r.busy += outcome == ReadOutcome::busy ? 1U : 0U;
      r.failures += outcome == ReadOutcome::failed ? 1U : 0U;
      ++r.reads;
      if (control.stop.load(std::memory_order_relaxed) >= rep) break;  // an L1 hit until the parent writes it
    }
    r.elapsed_ns = core::monotonic_ns() - start_ns;
    if (::write(fd, &r, sizeof r) != static_cast<ssize_t>(sizeof r)) return kChildPipeFailed;
  }
  return 0;
}

/// Runs kWarmupReps + config.reps repetitions of write() here against the child's reader and adds
/// the rows <prefix>.set and <prefix>.get. child_body(Control&, fd, total_reps) runs in the child.
template <class ChildBody, class Write>
void run_pair(const Config& config, const std::string& prefix, ChildBody&& child_body, Write&& write,
              const Check& write_check, Results& results) {
  SharedMapping control_map(sizeof(Control));
  int fds[2] = {-1, -1};
  if (!control_map.valid() || ::pipe(fds) != 0) {
    results.note_error(prefix, "mmap or pipe failed");
    return;
  }
  auto* control = new (control_map.data()) Control{};
  const std::uint32_t total_reps = kWarmupReps + static_cast<std::uint32_t>(config.reps);
  const CpuPair cpus;
  if (!cpus.pinned())
    std::fprintf(stderr, "weir bench: %s: could not put writer and reader on two CPUs; they may time-share one\n",
                 prefix.c_str());
  std::fflush(nullptr);  // nothing buffered may be written twice
  const pid_t pid = ::fork();
  if (pid == 0) {
    (void)::close(fds[0]);
    cpus.pin_child();
    int rc = kChildThrew;
    try {
      rc = child_body(*control, fds[1], total_reps);
    } catch (...) {  // rc stays kChildThrew: nothing may unwind into the parent's frames here
    }
    ::_exit(rc);  // never run the parent's destructors (its Arena) in the child
  }
  (void)::close(fds[1]);
  if (pid < 0) {
    (void)::close(fds[0]);
    results.note_error(prefix, "fork failed");
    return;
  }
  ChildProcess child(pid, fds[0]);
  int status = 0;
  const std::int64_t ready_deadline_ns = core::monotonic_ns() + kChildStartTimeoutNs;
  while (control->ready.load(std::memory_order_relaxed) == 0) {
    if (!child.running(status)) return results.note_error(prefix, exit_text(status));
    if (core::monotonic_ns() > ready_deadline_ns) return results.note_error(prefix, "reader child never got ready");
    cpu_relax();
  }

  const double clock_ns = clock_read_ns();
  std::vector<double> write_ns, read_ns;
  std::uint64_t writes = 0, bad_writes = 0, reads = 0, busy = 0, torn = 0, bad_reads = 0;
  for (std::uint32_t rep = 1; rep <= total_reps; ++rep) {
    // A writer that never pauses holds the epoch odd nearly all the time and starves every reader, so
    // it writes once per kWriteGapNs and each set is timed alone, less the cost of a clock read.
    std::uint64_t ops = 0, bad = 0;
    std::int64_t in_write_ns = 0;
    control->go.store(rep, std::memory_order_relaxed);
    const std::int64_t start_ns = core::monotonic_ns();
    for (std::int64_t t = start_ns; t - start_ns < config.rep_ns();) {
      const std::int64_t before_ns = core::monotonic_ns();
      bad += write(ops++) ? 0U : 1U;
      t = core::monotonic_ns();
      in_write_ns += t - before_ns;
      while (core::monotonic_ns() - t < kWriteGapNs) cpu_relax();
    }
    control->stop.store(rep, std::memory_order_relaxed);
    RepResult r;
    if (!child.read_exact(&r, sizeof r, kChildResultTimeoutNs)) {
      const bool exited = !child.running(status);
      return results.note_error(prefix, exited ? exit_text(status) : "reader child hung");
    }
    writes += ops;
    bad_writes += bad;
    if (rep <= kWarmupReps) continue;
    write_ns.push_back(static_cast<double>(in_write_ns) / static_cast<double>(ops) - clock_ns);
    read_ns.push_back(static_cast<double>(r.elapsed_ns) / static_cast<double>(r.reads > 0 ? r.reads : 1));
    reads += r.reads;
    busy += r.busy;
    torn += r.torn;
    bad_reads += r.failures;
  }
  if (!child.wait_exit(kChildExitTimeoutNs, status))
    results.note_error(prefix, "reader child did not exit; killed");
  else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    results.note_error(prefix, exit_text(status));

  if (bad_writes != 0) results.note_failures(prefix + ".set", bad_writes, writes, write_check.what());
  if (torn != 0) results.note_failures(prefix + ".get", torn, reads, "torn read: words of one value differ");
  if (bad_reads != 0) results.note_failures(prefix + ".get", bad_reads, reads, "unexpected status");
  Row set_row;
  set_row.name = prefix + ".set";
  set_row.stats = summarize(std::move(write_ns));
  results.add_row(std::move(set_row));
  Row get_row;
  get_row.name = prefix + ".get";
  get_row.stats = summarize(std::move(read_ns));
  get_row.busy_fraction = static_cast<double>(busy) / static_cast<double>(reads > 0 ? reads : 1);
  results.add_row(std::move(get_row));
}

void run_kv_pair(const Config& config, const core::Arena& arena, const std::string& arena_name, Results& results) {
  core::KvStore kv(arena);
  alignas(core::kCacheLine) std::array<std::byte, kSmallBytes> value{};
  core::KeyHandle handle;
  Check check;
  if (!check(kv.set(kXprocKey, value)) || !check(kv.resolve(kXprocKey, handle)))
    return results.note_error("setup.xproc", check.what());

  auto child_body = [&arena_name](Control& control, int fd, std::uint32_t total_reps) {
    auto attached = core::Arena::open(arena_name);
    if (!attached) {
      std::fprintf(stderr, "weir bench: reader child: %s\n", attached.error().what.c_str());
      return kChildSetupFailed;
    }
    core::KvStore reader(*attached);
    core::KeyHandle h;
    if (reader.resolve(kXprocKey, h) != core::KvStatus::ok) return kChildSetupFailed;
    auto read = [&](std::byte* out) noexcept {
      core::ValueInfo info;
      const core::KvStatus status = reader.get(h, std::span(out, kSmallBytes), info);
      if (status == core::KvStatus::ok) return info.length == kSmallBytes ? ReadOutcome::ok : ReadOutcome::failed;
      return status == core::KvStatus::busy ? ReadOutcome::busy : ReadOutcome::failed;
    };
    const int rc = reader_loop(control, fd, total_reps, read);
    attached->close();  // leave the attach table before _exit
    return rc;
  };
  auto write = [&](std::uint64_t i) noexcept {
    fill_words(value.data(), i);
    return check(kv.set(handle, value));
  };
  run_pair(config, "kv.xproc.1w1r.64B", child_body, write, check, results);
}

void run_bare_pair(const Config& config, Results& results) {
  BareSeqlock lock(kArenaSlots, core::slot_stride_for(kArenaKeyBytes, kLargeBytes),
                   core::value_offset_in_slot(kArenaKeyBytes));
  if (!lock.valid()) return results.note_error("setup.mmap", "mmap of the bare seqlock map failed");
  const std::size_t bytes = opaque(std::size_t{kSmallBytes});  // a run-time size, as in the store
  alignas(core::kCacheLine) std::array<std::byte, kSmallBytes> value{};
  constexpr std::uint32_t kSlot = 0;

  auto child_body = [&](Control& control, int fd, std::uint32_t total_reps) {
    // Like the store's get: retry until consistent, busy only after kDefaultWaitNs without success.
    auto read = [&](std::byte* out) noexcept {
      std::int64_t started_ns = 0;
      while (!lock.read(kSlot, out, bytes, core::kReadSpins)) {
        const std::int64_t t = core::monotonic_ns();
        if (started_ns == 0) started_ns = t;
        if (t - started_ns > core::kDefaultWaitNs) return ReadOutcome::busy;
      }
      return ReadOutcome::ok;
    };
    return reader_loop(control, fd, total_reps, read);
  };
  auto write = [&](std::uint64_t i) noexcept {
    fill_words(value.data(), i);
    lock.publish(kSlot, value.data(), bytes);
    return true;
  };
  run_pair(config, "base.xproc.1w1r.64B", child_body, write, Check{}, results);
}

}  // namespace

void run_xproc_cases(const Config& config, const core::Arena& arena, const std::string& arena_name,
                     Results& results) {
  run_kv_pair(config, arena, arena_name, results);
  run_bare_pair(config, results);
}

}  // namespace weir::bench

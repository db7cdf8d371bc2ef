#pragma once
// The channels suite's common ground: what every writer and reader does with a block, the reader
// children and their CPUs, and one transfer of a fixed number of blocks from this process to a
// forked reader, whatever carries them. Private to bench/.
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "bare_seqlock.hpp"
#include "child_process.hpp"
#include "harness.hpp"

namespace weir::bench {

inline constexpr std::int64_t kStallTimeoutNs = 5'000'000'000;       // a wait without progress gives up after this
inline constexpr std::int64_t kChildReadyTimeoutNs = 5'000'000'000;  // a child's set-up (attach, bind, register)
inline constexpr std::int64_t kChildExitTimeoutNs = 5'000'000'000;   // a child's exit after its report
inline constexpr int kSpinsBeforeYield = 256;                        // busy polls before a wait starts yielding
inline constexpr std::uint64_t kClockEvery = 64;                     // timed writers read the clock once per this many blocks
inline constexpr int kChildOk = 0;                                   // reader children's exit codes
inline constexpr int kChildSetupFailed = 3;
inline constexpr int kChildStalled = 4;
inline constexpr int kChildPipeFailed = 5;
inline constexpr int kChildThrew = 6;

/// What a writer puts in a block: a copy of the source block with the block's sequence number in
/// its first 8 bytes (the source holds samples, so the rest reads as a signal). Each cache line is
/// stored once, whole, as a DMA engine or a vectorised sample converter writes: the stamp goes into
/// the first line before it is stored. (A narrow store into a line just stored whole would make the
/// channel writer's pyramid, which reads the block back, wait for every earlier store to reach the
/// cache: the cross-core invalidations of the whole block.) Requires: bytes >= 64.
inline void fill_block(std::byte* dst, const std::byte* src, std::size_t bytes, std::uint64_t seq) noexcept {
  constexpr std::size_t kLine = 64;
  alignas(kLine) std::byte first[kLine];
  std::memcpy(first, src, kLine);
  std::memcpy(first, &seq, sizeof seq);
  std::memcpy(dst, first, kLine);
  std::memcpy(dst + kLine, src + kLine, bytes - kLine);
}

/// The sequence number a writer stamped into a block.
[[nodiscard]] inline std::uint64_t block_sequence(const std::byte* block) noexcept {
  std::uint64_t seq = 0;
  std::memcpy(&seq, block, sizeof seq);
  return seq;
}

/// What every reader does with a block it holds, wherever it lies (in place in shared memory, or in
/// the buffer a socket read into): loads the first 8 bytes of each cache line and sums them, so
/// every line of the block reaches the reader's core.
[[nodiscard]] inline std::uint64_t touch_block(const std::byte* block, std::size_t bytes) noexcept {
  std::uint64_t sum = 0;
  for (std::size_t off = 0; off < bytes; off += 64) {
    std::uint64_t word = 0;
    std::memcpy(&word, block + off, sizeof word);
    sum += word;
  }
  return sum;
}

/// A wait for the other side: spins kSpinsBeforeYield times, then yields, and gives up once it has
/// yielded for kStallTimeoutNs without reset() (progress) in between. Thread: its owner's.
class Patience {
 public:
  void reset() noexcept {
    spins_ = 0;
    yielding_since_ns_ = 0;
  }
  /// False once the wait has lasted too long.
  [[nodiscard]] bool wait() noexcept {
    if (++spins_ < kSpinsBeforeYield) {
      cpu_relax();
      return true;
    }
    const std::int64_t t = core::monotonic_ns();
    if (yielding_since_ns_ == 0) yielding_since_ns_ = t;
    if (t - yielding_since_ns_ > kStallTimeoutNs) return false;
    (void)::sched_yield();
    return true;
  }

 private:
  int spins_ = 0;
  std::int64_t yielding_since_ns_ = 0;
};

/// Flags between this process and its reader children, in a MAP_SHARED mapping made before fork.
/// They order nothing themselves (blocks travel through their transport, reports through a pipe),
/// except final_head, which is stored before stop with release and read after it with acquire.
struct Control {
  alignas(64) std::atomic<std::uint32_t> ready{0};       // children that are set up and reading
  alignas(64) std::atomic<std::uint32_t> stop{0};        // the writer is done: drain and report
  alignas(64) std::atomic<std::uint64_t> final_head{0};  // the writer's next sequence number at stop
};

/// A reader child's report, sent once through its pipe when it is done (well under PIPE_BUF).
struct ReaderReport {
  std::int64_t end_ns = 0;       // steady clock (CLOCK_MONOTONIC, shared by all processes) after the last block
  std::uint64_t blocks = 0;      // blocks read
  std::uint64_t lost = 0;        // blocks the reader counted lost (next() said so, or done() found the block reused)
  std::uint64_t bad = 0;         // blocks out of order or with a wrong sequence stamp
  std::uint64_t sum = 0;         // the touch_block sums: keeps the reads
  std::uint64_t row_read = 0;    // channels: the consumer row's own counters at the end
  std::uint64_t row_lost = 0;
  std::uint64_t end_cursor = 0;  // channels: the reader's cursor at the end
};

/// The CPUs the suite runs on: this process on the first allowed CPU, reader child k on the
/// (k mod (n - 1))-th of the others, so writer and readers never share a CPU where two or more are
/// allowed. Restores this process's CPU set when destroyed. Thread: the forking thread; pin_child()
/// in a child only.
class CpuPlan {
 public:
  CpuPlan() noexcept {
    CPU_ZERO(&original_);
    if (::sched_getaffinity(0, sizeof original_, &original_) != 0) return;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &original_)) cpus_.push_back(cpu);
    pinned_ = cpus_.size() >= 2 && pin(cpus_[0]);
  }
  CpuPlan(const CpuPlan&) = delete;
  CpuPlan& operator=(const CpuPlan&) = delete;
  ~CpuPlan() {
    if (pinned_) (void)::sched_setaffinity(0, sizeof original_, &original_);
  }

  /// Whether writer and readers run on different CPUs.
  [[nodiscard]] bool pinned() const noexcept { return pinned_; }
  /// CPUs left for reader children (0 when not pinned).
  [[nodiscard]] std::size_t reader_cpus() const noexcept { return pinned_ ? cpus_.size() - 1 : 0; }
  void pin_child(std::size_t k) const noexcept {
    if (pinned_) (void)pin(cpus_[1 + k % (cpus_.size() - 1)]);
  }

 private:
  static bool pin(int cpu) noexcept {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return ::sched_setaffinity(0, sizeof one, &one) == 0;
  }
  cpu_set_t original_;
  std::vector<int> cpus_;
  bool pinned_ = false;
};

/// Forks reader child k: it closes the pipe's read end, moves to its CPU, runs body(fd) (which
/// writes its ReaderReport to fd and returns an exit code) and _exits without running the parent's
/// destructors. Returns the child, killed and reaped when the pointer is destroyed before it
/// exited, or nullptr when pipe or fork failed.
template <class Body>
[[nodiscard]] std::unique_ptr<ChildProcess> spawn_reader(const CpuPlan& cpus, std::size_t k, Body&& body) {
  int fds[2] = {-1, -1};
  if (::pipe(fds) != 0) return nullptr;
  std::fflush(nullptr);  // nothing buffered may be written twice
  const pid_t pid = ::fork();
  if (pid == 0) {
    (void)::close(fds[0]);
    cpus.pin_child(k);
    int rc = kChildThrew;
    try {
      rc = body(fds[1]);
    } catch (...) {  // rc stays kChildThrew: nothing may unwind into the parent's frames here
    }
    ::_exit(rc);
  }
  (void)::close(fds[1]);
  if (pid < 0) {
    (void)::close(fds[0]);
    return nullptr;
  }
  return std::make_unique<ChildProcess>(pid, fds[0]);
}

/// Sends the report; the child's exit code.
[[nodiscard]] inline int send_report(int fd, const ReaderReport& report) noexcept {
  return ::write(fd, &report, sizeof report) == static_cast<ssize_t>(sizeof report) ? kChildOk : kChildPipeFailed;
}

/// Waits until `count` children are set up (control.ready), each still running. Returns an empty
/// string, or what went wrong.
[[nodiscard]] std::string wait_ready(const Control& control, std::uint32_t count,
                                     std::vector<std::unique_ptr<ChildProcess>>& children);

/// Reads a child's report and waits for its exit; empty string, or what went wrong.
[[nodiscard]] std::string collect(ChildProcess& child, ReaderReport& report);

/// Puts a Control block in `map` (a fresh MAP_SHARED mapping of sizeof(Control)), forks `count`
/// reader children running body(Control&, fd) into `children`, and waits until all are ready. The
/// Control block, or nullptr with `error` set (children already forked are killed with `children`).
template <class Body>
[[nodiscard]] Control* start_readers(const SharedMapping& map, const CpuPlan& cpus, std::uint32_t count, Body& body,
                                     std::vector<std::unique_ptr<ChildProcess>>& children, std::string& error) {
  if (!map.valid()) {
    error = "mmap of the control block failed";
    return nullptr;
  }
  auto* control = new (map.data()) Control{};
  for (std::uint32_t k = 0; k < count; ++k) {
    children.push_back(spawn_reader(cpus, k, [&body, control](int fd) { return body(*control, fd); }));
    if (children.back() == nullptr) {
      error = "pipe or fork failed";
      return nullptr;
    }
  }
  if (error = wait_ready(*control, count, children); !error.empty()) return nullptr;
  return control;
}

/// One transfer: `blocks` blocks of `block_bytes` from this process to one reader child that must
/// see every one, in order, through a ring of `ring_blocks` slots where the transport has one.
struct TransferSpec {
  std::size_t block_bytes = 0;
  std::uint64_t blocks = 0;
  std::uint32_t ring_blocks = 0;
};

/// Elapsed ns from the writer's first block to the reader's last, or nullopt with `error` set.
using TransferResult = std::optional<std::int64_t>;

/// Runs one transfer: forks the reader child, which runs child_body(Control&, fd) (it sets
/// control.ready once set up, reads spec.blocks blocks and sends its report), waits for it, then
/// runs write_all(std::string& error) here, which returns false (error set) if it could not write
/// every block. Checks the report: every block read, none lost, none out of order.
template <class ChildBody, class WriteAll>
[[nodiscard]] TransferResult run_transfer(const TransferSpec& spec, const CpuPlan& cpus, ChildBody&& child_body,
                                          WriteAll&& write_all, std::string& error) {
  SharedMapping map(sizeof(Control));
  std::vector<std::unique_ptr<ChildProcess>> children;
  Control* control = start_readers(map, cpus, 1, child_body, children, error);
  if (control == nullptr) return std::nullopt;
  const std::int64_t start_ns = core::monotonic_ns();
  if (!write_all(error)) return std::nullopt;  // the child is killed on the way out
  ReaderReport report;
  if (error = collect(*children.back(), report); !error.empty()) return std::nullopt;
  if (report.blocks != spec.blocks || report.lost != 0 || report.bad != 0) {
    error = "reader saw " + std::to_string(report.blocks) + " of " + std::to_string(spec.blocks) + " blocks, " +
            std::to_string(report.lost) + " lost, " + std::to_string(report.bad) + " out of order";
    return std::nullopt;
  }
  return report.end_ns - start_ns;
}

/// One writer-cost repetition: how fast the writer went, and what its readers read and lost.
struct CostOutcome {
  double blocks_per_s = 0;
  std::uint64_t read = 0;  // by all readers together
  std::uint64_t lost = 0;
};

/// Runs one writer-cost repetition: forks `readers` reader children, each running
/// reader_body(Control&, fd) (it sets control.ready once set up, follows the writer until
/// control.stop finds nothing new, and sends its report), then calls write_one(std::string& error)
/// here for run_ns (false, error set: it could not write a block), sets stop and collects the reports.
template <class ReaderBody, class WriteOne>
[[nodiscard]] std::optional<CostOutcome> run_cost(const CpuPlan& cpus, std::uint32_t readers, std::int64_t run_ns,
                                                  ReaderBody&& reader_body, WriteOne&& write_one, std::string& error) {
  SharedMapping map(sizeof(Control));
  std::vector<std::unique_ptr<ChildProcess>> children;
  Control* control = start_readers(map, cpus, readers, reader_body, children, error);
  if (control == nullptr) return std::nullopt;
  std::uint64_t blocks = 0;
  const std::int64_t start_ns = core::monotonic_ns();
  std::int64_t elapsed_ns = 0;
  for (;;) {
    if (!write_one(error)) return std::nullopt;  // the children are killed on the way out
    if (++blocks % kClockEvery == 0 && (elapsed_ns = core::monotonic_ns() - start_ns) >= run_ns) break;
  }
  control->stop.store(1, std::memory_order_relaxed);
  CostOutcome outcome;
  outcome.blocks_per_s = static_cast<double>(blocks) / static_cast<double>(elapsed_ns) * 1e9;
  for (auto& child : children) {
    ReaderReport r;
    if (error = collect(*child, r); !error.empty()) return std::nullopt;
    outcome.read += r.blocks;
    outcome.lost += r.lost;
  }
  return outcome;
}

/// The bare floors: a minimal shared-memory SPSC ring, a Unix stream socket pair, ZeroMQ ipc
/// PUSH/PULL. Each writes spec.blocks blocks (fill_block from `source`) that the reader touches.
[[nodiscard]] TransferResult transfer_ring(const TransferSpec& spec, const CpuPlan& cpus,
                                           const std::vector<std::byte>& source, std::string& error);
[[nodiscard]] TransferResult transfer_unix(const TransferSpec& spec, const CpuPlan& cpus,
                                           const std::vector<std::byte>& source, std::string& error);
[[nodiscard]] TransferResult transfer_zmq(const TransferSpec& spec, const CpuPlan& cpus,
                                          const std::vector<std::byte>& source, std::string& error);

/// The writer-cost floor: a bare broadcast ring (broadcast_ring.hpp) of `ring_blocks` slots written
/// with blocks of source.size() bytes for run_ns, with `readers` lossy reader children touching
/// every block they get to, as the channel's lossy readers do.
[[nodiscard]] std::optional<CostOutcome> ring_writer_cost(const CpuPlan& cpus, std::uint32_t readers,
                                                          std::int64_t run_ns, std::uint32_t ring_blocks,
                                                          const std::vector<std::byte>& source, std::string& error);

}  // namespace weir::bench

// Wake latency: this process and a forked child hand a sequence number back and forth, each
// sleeping (or spinning) until the other's message arrives. On weir, the parent sets key
// "sig.ping" and waits on a Watcher of key "sig.pong"; the child does the reverse. On the bare
// floor, the same hand-over goes through two shared 32-bit words (futex_pingpong.hpp). Each
// message carries the sender's CLOCK_MONOTONIC stamp, and the receiver records now - stamp once it
// holds the message: one sample per one-way hand-over, two per round trip. A repetition
// alternates chunks of the bare floor and of weir, each chunk with a fresh child, so a change in
// the machine's load during the run reaches both alike.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <new>
#include <span>
#include <string_view>
#include <vector>

#include "bare_seqlock.hpp"
#include "cases.hpp"
#include "child_process.hpp"
#include "futex_pingpong.hpp"
#include "signal_cases.hpp"
#include "weir/core/signals.hpp"

namespace weir::bench {

namespace {

constexpr std::int64_t kRecvTimeoutNs = 5'000'000'000;        // every receive gives up after this
constexpr std::int64_t kChildStartTimeoutNs = 5'000'000'000;  // child attach, watcher and subscription
constexpr std::int64_t kChildExitTimeoutNs = 2'000'000'000;   // child exit after its last message
constexpr long kReadyPollNs = 100'000;                        // parent's sleep between looks at `ready`
constexpr std::uint32_t kWarmupReps = 1;                      // first repetitions, one chunk pair each, not reported
constexpr std::uint64_t kChunks = 10;                         // chunks of the floor and of weir per repetition
constexpr int kChildSetupFailed = 3;                          // child exit codes
constexpr int kChildTimedOut = 4;
constexpr int kChildWrongValue = 5;
constexpr int kChildThrew = 6;
constexpr int kChildSendFailed = 7;
constexpr int kChildOrphaned = 8;
constexpr std::string_view kPingKey = "sig.ping";
constexpr std::string_view kPongKey = "sig.pong";
constexpr double kQuantiles[] = {0.5, 0.99, 0.999, 1.0};
constexpr const char* kQuantileNames[] = {"p50", "p99", "p999", "max"};
constexpr std::size_t kQuantileCount = std::size(kQuantiles);
static_assert(std::size(kQuantileNames) == kQuantileCount);

struct WakeShared {  // in a MAP_SHARED mapping made before fork
  alignas(core::kCacheLine) std::atomic<std::uint32_t> ready{0};  // child: set up, its end listening
  BareWord ping{};                                          // the bare case's words; unused on weir
  BareWord pong{};
};

struct TripPlan {  // one chunk
  std::uint64_t lead_in = kWakeLeadInTrips;  // untimed round trips first
  std::uint64_t timed = 0;                   // then the recorded ones
  [[nodiscard]] std::uint64_t trips() const noexcept { return lead_in + timed; }
};

// The message of the weir cases: a 16-byte value.
struct Message {
  std::uint64_t seq = 0;
  std::int64_t sent_ns = 0;
};

/// One process's end of the weir ping-pong: sets send_key, waits on a Watcher of recv_key.
class WeirEnd {
 public:
  WeirEnd(const core::Arena& arena, core::Watcher& watcher, std::string_view send_key, std::string_view recv_key,
          std::int64_t spin_ns) noexcept
      : kv_(arena), watcher_(watcher), send_key_(send_key), recv_key_(recv_key), spin_ns_(spin_ns) {}

  [[nodiscard]] bool send(std::uint64_t seq) noexcept {
    const Message m{seq, core::monotonic_ns()};
    std::memcpy(buf_.data(), &m, sizeof m);
    return kv_.set(send_key_, std::span<const std::byte>(buf_.data(), sizeof m)) == core::KvStatus::ok;
  }

  RecvStatus receive(std::uint64_t seq, std::int64_t timeout_ns, std::int64_t& latency_ns) noexcept {
    switch (watcher_.wait(timeout_ns, spin_ns_)) {
      case core::WaitStatus::pulsed: break;
      case core::WaitStatus::timed_out: return RecvStatus::timed_out;
    }
    core::ValueInfo info;
    if (kv_.get(recv_key_, buf_, info) != core::KvStatus::ok || info.length != sizeof(Message))
      return RecvStatus::wrong_value;
    Message m;
    std::memcpy(&m, buf_.data(), sizeof m);
    latency_ns = core::monotonic_ns() - m.sent_ns;
    return m.seq == seq ? RecvStatus::ok : RecvStatus::wrong_value;
  }

 private:
  core::KvStore kv_;
  core::Watcher& watcher_;
  std::string_view send_key_;
  std::string_view recv_key_;
  std::int64_t spin_ns_;
  alignas(core::kCacheLine) std::array<std::byte, kSignalValueBytes> buf_{};
};

// The child's side: answers every message with the same sequence number and records the one-way
// latency of each timed trip in `samples`, which the parent reads once this process has exited.
template <class End>
int child_loop(End& end, WakeShared& shared, std::int64_t* samples, const TripPlan& plan) noexcept {
  const pid_t parent = ::getppid();
  shared.ready.store(1, std::memory_order_release);  // the end is listening: pairs with the parent's acquire
  for (std::uint64_t k = 1; k <= plan.trips(); ++k) {
    std::int64_t latency_ns = 0;
    switch (end.receive(k, kRecvTimeoutNs, latency_ns)) {
      case RecvStatus::ok: break;
      case RecvStatus::timed_out: return ::getppid() != parent ? kChildOrphaned : kChildTimedOut;
      case RecvStatus::wrong_value: return kChildWrongValue;
    }
    if (k > plan.lead_in) samples[k - 1 - plan.lead_in] = latency_ns;
    if (!end.send(k)) return kChildSendFailed;
  }
  return 0;
}

std::string child_problem(int status) {
  if (WIFEXITED(status)) {
    switch (WEXITSTATUS(status)) {
      case kChildSetupFailed: return "child could not attach, watch or subscribe";
      case kChildTimedOut: return "child heard nothing for 5 s";
      case kChildWrongValue: return "child received the wrong sequence number (a lost or merged wake)";
      case kChildSendFailed: return "child's set failed";
      case kChildOrphaned: return "child lost its parent";
      default: break;
    }
  }
  return exit_text(status, "child");
}

using Quantiles = std::array<double, kQuantileCount>;  // one repetition's p50, p99, p999, max in ns

bool fail_chunk(Results& results, const std::string& prefix, const std::string& what) {
  results.note_error(prefix, what);
  return false;
}

/// One chunk: plan.trips() round trips between `end` here and a fresh child running
/// child_main(WakeShared&, samples, plan), placed as asked. make_end(WakeShared&) builds this
/// process's end once the shared words exist, before fork. Appends the 2 x plan.timed one-way
/// samples of both sides to `samples`; false after reporting a failure.
template <class MakeEnd, class ChildMain>
bool run_chunk(const std::string& prefix, Placement placement, const TripPlan& plan, MakeEnd&& make_end,
               ChildMain&& child_main, std::vector<std::int64_t>& samples, Results& results) {
  SharedMapping control_map(sizeof(WakeShared));
  SharedMapping samples_map(plan.timed * sizeof(std::int64_t));
  if (!control_map.valid() || !samples_map.valid()) return fail_chunk(results, prefix, "mmap failed");
  auto* shared = new (control_map.data()) WakeShared{};
  const auto* child_samples = reinterpret_cast<const std::int64_t*>(samples_map.data());  // zeroed by mmap
  auto end = make_end(*shared);

  const CpuPair cpus(placement);
  std::fflush(nullptr);  // nothing buffered may be written twice
  const pid_t pid = ::fork();
  if (pid == 0) {
    cpus.pin_child();
    int rc = kChildThrew;
    try {
      rc = child_main(*shared, reinterpret_cast<std::int64_t*>(samples_map.data()), plan);
    } catch (...) {  // rc stays kChildThrew: nothing may unwind into the parent's frames here
    }
    ::_exit(rc);  // never run the parent's destructors (its Arena, its Watcher) in the child
  }
  if (pid < 0) return fail_chunk(results, prefix, "fork failed");
  ChildProcess child(pid, -1);
  int status = 0;
  const std::int64_t ready_deadline_ns = core::monotonic_ns() + kChildStartTimeoutNs;
  while (shared->ready.load(std::memory_order_acquire) == 0) {  // pairs with the child's release
    if (!child.running(status)) return fail_chunk(results, prefix, child_problem(status));
    if (core::monotonic_ns() > ready_deadline_ns) return fail_chunk(results, prefix, "child never got ready");
    const timespec slice{0, kReadyPollNs};  // sleep, not spin: on one CPU the child needs it
    (void)::nanosleep(&slice, nullptr);
  }

  const std::size_t first = samples.size();
  samples.resize(first + 2 * plan.timed);
  for (std::uint64_t k = 1; k <= plan.trips(); ++k) {
    if (!end.send(k)) return fail_chunk(results, prefix, "this process's set failed");
    std::int64_t latency_ns = 0;
    switch (end.receive(k, kRecvTimeoutNs, latency_ns)) {
      case RecvStatus::ok: break;
      case RecvStatus::timed_out:
        return fail_chunk(results, prefix,
                        child.running(status) ? "no answer for 5 s; child killed" : child_problem(status));
      case RecvStatus::wrong_value:
        return fail_chunk(results, prefix, "received the wrong sequence number (a lost or merged wake)");
    }
    if (k > plan.lead_in) samples[first + k - 1 - plan.lead_in] = latency_ns;
  }
  if (!child.wait_exit(kChildExitTimeoutNs, status))
    return fail_chunk(results, prefix, "child did not exit; killed");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return fail_chunk(results, prefix, child_problem(status));

  std::copy(child_samples, child_samples + plan.timed,
            samples.begin() + static_cast<std::ptrdiff_t>(first + plan.timed));
  return true;
}

Quantiles quantiles(std::vector<std::int64_t>& samples) {
  std::sort(samples.begin(), samples.end());
  Quantiles q{};
  for (std::size_t i = 0; i < kQuantileCount; ++i) q[i] = static_cast<double>(percentile(samples, kQuantiles[i]));
  return q;
}

bool run_bare_chunk(const std::string& prefix, Placement placement, BareMode mode, const TripPlan& plan,
                    std::vector<std::int64_t>& samples, Results& results) {
  auto make_end = [mode](WakeShared& shared) { return BareEnd(shared.ping, shared.pong, mode); };
  auto child_main = [mode](WakeShared& shared, std::int64_t* child_samples, const TripPlan& p) {
    BareEnd end(shared.pong, shared.ping, mode);
    return child_loop(end, shared, child_samples, p);
  };
  return run_chunk(prefix, placement, plan, make_end, child_main, samples, results);
}

bool run_weir_chunk(const std::string& prefix, Placement placement, std::int64_t spin_ns, const TripPlan& plan,
                    const core::Arena& arena, const std::string& arena_name, std::vector<std::int64_t>& samples,
                    Results& results) {
  auto maybe_watcher = core::Watcher::create(arena);
  if (!maybe_watcher) return fail_chunk(results, prefix, "watcher: " + maybe_watcher.error().what);
  if (auto sub = maybe_watcher->subscribe_key(kPongKey); !sub)
    return fail_chunk(results, prefix, "subscribe: " + sub.error().what);
  core::Watcher& watcher = *maybe_watcher;

  auto make_end = [&](WakeShared&) { return WeirEnd(arena, watcher, kPingKey, kPongKey, spin_ns); };
  auto child_main = [&arena_name, spin_ns](WakeShared& shared, std::int64_t* child_samples, const TripPlan& p) {
    auto attached = core::Arena::open(arena_name);
    if (!attached) {
      std::fprintf(stderr, "weir bench: child: %s\n", attached.error().what.c_str());
      return kChildSetupFailed;
    }
    int rc = kChildSetupFailed;
    {
      auto child_watcher = core::Watcher::create(*attached);
      if (child_watcher && child_watcher->subscribe_key(kPingKey)) {
        WeirEnd end(*attached, *child_watcher, kPongKey, kPingKey, spin_ns);
        rc = child_loop(end, shared, child_samples, p);
      }
    }  // the watcher gives its row and subscription back before the arena is closed
    attached->close();  // leave the attach table before _exit
    return rc;
  };
  return run_chunk(prefix, placement, plan, make_end, child_main, samples, results);
}

struct WakePair {
  const char* base;  // row prefix of the bare floor
  const char* weir;  // row prefix of weir
  Placement placement;
  BareMode mode;
  std::int64_t spin_ns;  // the watchers' spin_ns
};

constexpr WakePair kPairs[] = {
    {"base.futex.1cpu", "signals.wake.1cpu", Placement::one_cpu, BareMode::futex, 0},
    {"base.futex.2cpu", "signals.wake.2cpu", Placement::two_cpus, BareMode::futex, 0},
    {"base.spin.2cpu", "signals.wake.spin.2cpu", Placement::two_cpus, BareMode::spin, kWakeSpinNs},
};

void add_rows(const std::string& prefix, const std::vector<Quantiles>& reps, Results& results) {
  for (std::size_t q = 0; q < kQuantileCount; ++q) {
    std::vector<double> per_rep;
    for (const Quantiles& r : reps) per_rep.push_back(r[q]);
    Row row;
    row.name = prefix + "." + kQuantileNames[q];
    row.unit = kUnitNs;
    row.stats = summarize(std::move(per_rep));
    results.add_row(std::move(row));
  }
}

/// Alternates chunks of the bare floor and of weir; adds both sets of rows when all succeeded.
void run_pair(const Config& config, const WakePair& pair, const core::Arena& arena, const std::string& arena_name,
              Results& results) {
  const std::string base = pair.base, weir = pair.weir;
  if (!CpuPair(pair.placement).pinned()) {
    std::fprintf(stderr, "weir bench: %s, %s: skipped: this process may not use %s\n", pair.base, pair.weir,
                 pair.placement == Placement::one_cpu ? "a CPU of its own choice" : "two CPUs");
    return;
  }
  std::vector<Quantiles> base_reps, weir_reps;
  std::vector<std::int64_t> base_samples, weir_samples;
  TripPlan plan;
  plan.timed = wake_round_trips(config) / kChunks;
  const std::uint32_t total_reps = kWarmupReps + static_cast<std::uint32_t>(config.reps);
  for (std::uint32_t rep = 1; rep <= total_reps; ++rep) {
    const bool warmup = rep <= kWarmupReps;
    base_samples.clear();
    weir_samples.clear();
    for (std::uint64_t c = 0; c < (warmup ? 1 : kChunks); ++c) {
      if (!run_bare_chunk(base, pair.placement, pair.mode, plan, base_samples, results)) return;
      if (!run_weir_chunk(weir, pair.placement, pair.spin_ns, plan, arena, arena_name, weir_samples, results)) return;
    }
    if (warmup) continue;
    base_reps.push_back(quantiles(base_samples));
    weir_reps.push_back(quantiles(weir_samples));
  }
  add_rows(base, base_reps, results);
  add_rows(weir, weir_reps, results);
}

}  // namespace

void run_wake_cases(const Config& config, const core::Arena& arena, const std::string& arena_name,
                    Results& results) {
  core::KvStore kv(arena);
  const Message zero{};
  Check check;
  for (std::string_view key : {kPingKey, kPongKey})  // both keys exist before anyone watches them
    if (!check(kv.set(key, std::span<const std::byte>(reinterpret_cast<const std::byte*>(&zero), sizeof zero))))
      return results.note_error("setup.wake", check.what());

  for (const WakePair& pair : kPairs) run_pair(config, pair, arena, arena_name, results);
}

}  // namespace weir::bench

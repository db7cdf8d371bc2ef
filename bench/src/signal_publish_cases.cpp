// Publish cost: KvStore::set by key on a key whose labels match 0, 1, 8 or 64 label groups with
// nobody waiting, and on the 1-group key while a watcher in a forked child sleeps on its group, so
// that every set rings a doorbell and makes a FUTEX_WAKE; its floor, a store and FUTEX_WAKE of a
// bare word a child sleeps on.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
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

constexpr std::uint32_t kMaxGroups = core::kGroupCount;      // every label group the table can hold
constexpr std::uint32_t kPublishBytes = 16;                  // value size, as the wake cases' messages
constexpr std::int64_t kChildStartTimeoutNs = 5'000'000'000;  // child attach, watcher and subscription
constexpr std::int64_t kAsleepTimeoutNs = 5'000'000'000;     // the child re-arms its wait within this
constexpr std::int64_t kChildWaitNs = 1'000'000'000;         // the child's wait timeout: it then checks its parent
constexpr std::int64_t kChildExitTimeoutNs = 2'000'000'000;  // child exit after stop
constexpr std::int64_t kSettleNs = 20'000;                   // after its waiter bit shows: time to enter FUTEX_WAIT
constexpr long kReadyPollNs = 100'000;                       // parent's sleep between looks at `ready`
constexpr std::uint32_t kWarmupReps = 1;                     // first repetitions of the waiter case, not reported
constexpr int kChildSetupFailed = 3;                         // child exit codes
constexpr int kChildOrphaned = 4;
constexpr int kChildThrew = 6;

static_assert(kMaxGroups <= core::kLabelCapacity, "one label per group");

struct PublishCase {
  const char* name;
  const char* key;
  std::uint32_t groups;  // labels l0 .. l<groups-1>
};

constexpr PublishCase kCases[] = {
    {"kv.set.0groups", "pub.0g", 0},
    {"signals.publish.1group", "pub.1g", 1},
    {"signals.publish.8groups", "pub.8g", 8},
    {"signals.publish.64groups", "pub.64g", kMaxGroups},
};
constexpr const char* kWeirWaiterName = "signals.publish.1group.1waiter";
constexpr const char* kBareWaiterName = "base.futex.wake.1waiter";
constexpr const char* kWaiterCaseKey = "pub.1g";
constexpr const char* kWaiterLabel = "l0";

// "l0", "l1", ... (snprintf, not "l" + std::to_string: GCC 12 -O3 warns falsely on that.)
std::string label_name(std::uint32_t i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "l%u", i);
  return buf;
}

/// Holds one subscription per label group l0 .. l63 for the cases' lifetime, so every group exists.
class LabelGroups {
 public:
  explicit LabelGroups(const core::Arena& arena) : table_(arena) {}
  LabelGroups(const LabelGroups&) = delete;
  LabelGroups& operator=(const LabelGroups&) = delete;
  ~LabelGroups() {
    for (std::uint32_t g : groups_) table_.release(g);
  }

  [[nodiscard]] core::Result<void> acquire(std::uint32_t count) {
    for (std::uint32_t i = 0; i < count; ++i) {
      auto g = table_.acquire_label(label_name(i));
      if (!g) return tl::make_unexpected(g.error());
      groups_.push_back(*g);
    }
    return {};
  }
  [[nodiscard]] std::uint32_t group(std::uint32_t i) const noexcept { return groups_[i]; }

 private:
  core::GroupTable table_;
  std::vector<std::uint32_t> groups_;
};

struct WaiterShared {  // in a MAP_SHARED mapping made before fork
  alignas(core::kCacheLine) std::atomic<std::uint32_t> ready{0};  // child: subscribed; `row` is valid
  std::atomic<std::uint32_t> row{0};                               // the weir child's watcher row
  alignas(core::kCacheLine) std::atomic<std::uint32_t> stop{0};   // parent: done, exit at the next wake
  alignas(core::kCacheLine) std::atomic<std::uint64_t> wakes{0};  // weir child: waits that returned pulsed
  alignas(core::kCacheLine) std::atomic<std::uint32_t> armed_for{0};  // bare child: the word it sleeps on
  BareWord word{};                                                     // bare case: the futex word
};

int weir_waiter(const std::string& arena_name, WaiterShared& shared) {
  const pid_t parent = ::getppid();
  auto attached = core::Arena::open(arena_name);
  if (!attached) {
    std::fprintf(stderr, "weir bench: waiter child: %s\n", attached.error().what.c_str());
    return kChildSetupFailed;
  }
  int rc = kChildSetupFailed;
  {
    auto watcher = core::Watcher::create(*attached);
    if (watcher && watcher->subscribe_label(kWaiterLabel)) {
      shared.row.store(watcher->row(), std::memory_order_relaxed);  // published by ready's release below
      shared.ready.store(1, std::memory_order_release);  // row is written: pairs with the parent's acquire
      rc = 0;
      while (shared.stop.load(std::memory_order_relaxed) == 0) {  // a flag: nothing else rides on it
        switch (watcher->wait(kChildWaitNs)) {
          case core::WaitStatus::pulsed:
            shared.wakes.fetch_add(1, std::memory_order_release);  // its waiter bit is clear: pairs with the parent
            break;
          case core::WaitStatus::timed_out:
            if (::getppid() != parent) rc = kChildOrphaned;
            break;
        }
        if (rc != 0) break;
      }
    }
  }  // the watcher gives its row and subscription back before the arena is closed
  attached->close();
  return rc;
}

int bare_waiter(WaiterShared& shared) {
  const pid_t parent = ::getppid();
  const timespec timeout{static_cast<time_t>(kChildWaitNs / kNsPerSecond),
                         static_cast<long>(kChildWaitNs % kNsPerSecond)};
  shared.ready.store(1, std::memory_order_release);  // pairs with the parent's acquire
  for (;;) {
    const std::uint32_t seen = shared.word.seq.load(std::memory_order_acquire);  // pairs with the parent's release
    if (shared.stop.load(std::memory_order_relaxed) != 0) return 0;  // a flag, ordered by the acquire above
    shared.armed_for.store(seen, std::memory_order_release);  // after the load above: pairs with the parent
    if (futex_call(shared.word.seq, FUTEX_WAIT, seen, &timeout) != 0 && errno == ETIMEDOUT && ::getppid() != parent)
      return kChildOrphaned;
  }
}

/// Times publish() while a child, on the other CPU, sleeps waiting for it. Before each publish this
/// process waits until armed(publishes so far) says the child woke from the last one and went back
/// to waiting, then kSettleNs more so it is inside FUTEX_WAIT; each publish is timed alone. After the
/// last one it sets stop and publishes once more to wake the child. wake_calls() counts the publishes
/// that made a FUTEX_WAKE. Adds row `name` (ns/op: per repetition, the median set).
template <class ChildMain, class Armed, class Publish, class WakeCalls>
void run_waiter_case(const Config& config, const std::string& name, WaiterShared& shared, ChildMain&& child_main,
                     Armed&& armed, Publish&& publish, WakeCalls&& wake_calls, Results& results) {
  const CpuPair cpus(Placement::two_cpus);  // the woken child must not take this process's CPU
  if (!cpus.pinned()) {
    std::fprintf(stderr, "weir bench: %s: skipped: this process may not use two CPUs\n", name.c_str());
    return;
  }
  std::fflush(nullptr);  // nothing buffered may be written twice
  const pid_t pid = ::fork();
  if (pid == 0) {
    cpus.pin_child();
    int rc = kChildThrew;
    try {
      rc = child_main();
    } catch (...) {  // rc stays kChildThrew: nothing may unwind into the parent's frames here
    }
    ::_exit(rc);  // never run the parent's destructors in the child
  }
  if (pid < 0) return results.note_error(name, "fork failed");
  ChildProcess child(pid, -1);
  int status = 0;
  const std::int64_t ready_deadline_ns = core::monotonic_ns() + kChildStartTimeoutNs;
  while (shared.ready.load(std::memory_order_acquire) == 0) {  // pairs with the child's release
    if (!child.running(status)) return results.note_error(name, exit_text(status, "waiter child"));
    if (core::monotonic_ns() > ready_deadline_ns) return results.note_error(name, "waiter child never got ready");
    const timespec slice{0, kReadyPollNs};
    (void)::nanosleep(&slice, nullptr);
  }

  const double clock_ns = clock_read_ns();
  std::vector<double> per_rep_ns;
  std::vector<std::int64_t> set_ns;  // each timed publish of the repetition under way
  std::uint64_t publishes = 0, bad = 0, timed_ops = 0, timed_wakes = 0;
  const std::uint32_t total_reps = kWarmupReps + static_cast<std::uint32_t>(config.reps);
  for (std::uint32_t rep = 1; rep <= total_reps; ++rep) {
    set_ns.clear();
    const std::uint64_t wakes_before = wake_calls();
    const std::int64_t start_ns = core::monotonic_ns();
    for (std::int64_t t = start_ns; t - start_ns < config.rep_ns();) {
      const std::int64_t asleep_deadline_ns = t + kAsleepTimeoutNs;
      while (!armed(publishes)) {
        if (core::monotonic_ns() > asleep_deadline_ns) {
          return results.note_error(name, child.running(status) ? "waiter child did not wake, or not go back to sleep"
                                                                : exit_text(status, "waiter child"));
        }
        cpu_relax();
      }
      const std::int64_t settled_ns = core::monotonic_ns();
      while (core::monotonic_ns() - settled_ns < kSettleNs) cpu_relax();
      const std::int64_t before_ns = core::monotonic_ns();
      bad += publish(publishes) ? 0U : 1U;
      t = core::monotonic_ns();
      set_ns.push_back(t - before_ns);
      ++publishes;
    }
    if (rep <= kWarmupReps) continue;
    timed_ops += set_ns.size();
    timed_wakes += wake_calls() - wakes_before;
    // The median, not the mean: one publish in a thousand preempted for a scheduler tick would
    // otherwise double the line on a busy machine.
    std::sort(set_ns.begin(), set_ns.end());
    per_rep_ns.push_back(static_cast<double>(percentile(set_ns, 0.5)) - clock_ns);
  }
  shared.stop.store(1, std::memory_order_relaxed);  // the publish's release and the child's wait order it
  (void)publish(publishes);                          // wakes the child to see stop
  if (!child.wait_exit(kChildExitTimeoutNs, status))
    return results.note_error(name, "waiter child did not exit; killed");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return results.note_error(name, exit_text(status, "waiter child"));
  if (bad != 0) results.note_failures(name, bad, publishes, "set failed");
  Row row;
  row.name = name;
  row.stats = summarize(std::move(per_rep_ns));
  row.wake_fraction = static_cast<double>(timed_wakes) / static_cast<double>(timed_ops > 0 ? timed_ops : 1);
  results.add_row(std::move(row));
}

void run_weir_waiter(const Config& config, const core::Arena& arena, const std::string& arena_name,
                     std::uint32_t group, Results& results) {
  SharedMapping control_map(sizeof(WaiterShared));
  if (!control_map.valid()) return results.note_error(kWeirWaiterName, "mmap failed");
  auto* shared = new (control_map.data()) WaiterShared{};
  core::KvStore kv(arena);
  alignas(core::kCacheLine) std::array<std::byte, kPublishBytes> value{};
  // The group's waiter bitmap, read straight from the layout: the child's bit is set from just
  // before its FUTEX_WAIT until just after it wakes.
  const auto* groups = reinterpret_cast<const core::SignalGroup*>(arena.region(core::Region::groups));
  const std::atomic<std::uint64_t>& waiters = groups[group].waiters;
  const std::atomic<std::uint64_t>& wake_syscalls = arena.header().wake_syscalls;

  auto child_main = [&] { return weir_waiter(arena_name, *shared); };
  // The child must have woken from the last set (its bit, still set until it runs, would fool the
  // bitmap test) and be back in wait(): its wake count first, then its waiter bit.
  auto armed = [&](std::uint64_t publishes) noexcept {
    const std::uint64_t bit = std::uint64_t{1} << shared->row.load(std::memory_order_relaxed);  // after ready
    return shared->wakes.load(std::memory_order_acquire) >= publishes &&  // pairs with the child's release
           (waiters.load(std::memory_order_relaxed) & bit) != 0;         // a hint: the set re-reads it seq_cst
  };
  auto publish = [&](std::uint64_t i) noexcept {
    std::memcpy(value.data(), &i, sizeof i);
    return kv.set(kWaiterCaseKey, value) == core::KvStatus::ok;
  };
  auto wake_calls = [&]() noexcept { return wake_syscalls.load(std::memory_order_relaxed); };  // a counter
  run_waiter_case(config, kWeirWaiterName, *shared, child_main, armed, publish, wake_calls, results);
}

void run_bare_waiter(const Config& config, Results& results) {
  SharedMapping control_map(sizeof(WaiterShared));
  if (!control_map.valid()) return results.note_error(kBareWaiterName, "mmap failed");
  auto* shared = new (control_map.data()) WaiterShared{};
  std::uint64_t woken = 0;  // FUTEX_WAKE calls that woke the child

  auto child_main = [&] { return bare_waiter(*shared); };
  // The child has seen the last store (it sleeps on the current value), so it woke from it.
  auto armed = [&](std::uint64_t) noexcept {
    return shared->armed_for.load(std::memory_order_acquire) ==  // pairs with the child's release
           shared->word.seq.load(std::memory_order_relaxed);     // only this process stores it
  };
  auto publish = [&](std::uint64_t i) noexcept {
    shared->word.seq.store(static_cast<std::uint32_t>(i + 1), std::memory_order_release);  // pairs with the child
    woken += futex_call(shared->word.seq, FUTEX_WAKE, 1, nullptr) == 1 ? 1U : 0U;
    return true;
  };
  auto wake_calls = [&]() noexcept { return woken; };
  run_waiter_case(config, kBareWaiterName, *shared, child_main, armed, publish, wake_calls, results);
}

}  // namespace

void run_publish_cases(const Config& config, const core::Arena& arena, const std::string& arena_name,
                       Results& results) {
  LabelGroups labels(arena);
  if (auto acquired = labels.acquire(kMaxGroups); !acquired)
    return results.note_error("setup.publish", "label groups: " + acquired.error().what);
  core::KvStore kv(arena);
  alignas(core::kCacheLine) std::array<std::byte, kPublishBytes> value{};
  for (const PublishCase& c : kCases) {
    std::vector<std::string> names;
    for (std::uint32_t i = 0; i < c.groups; ++i) names.push_back(label_name(i));
    if (auto labelled = core::set_labels(arena, c.key, names); !labelled)
      return results.note_error("setup.publish", std::string(c.key) + ": " + labelled.error().what);
  }
  for (const PublishCase& c : kCases) {
    Check check;
    const std::string_view key = c.key;
    const Measured m = measure(config, [&](std::uint64_t i) noexcept {
      std::memcpy(value.data(), &i, sizeof i);
      return check(kv.set(key, value));
    });
    results.add(c.name, m, check.what());
  }
  run_bare_waiter(config, results);
  run_weir_waiter(config, arena, arena_name, labels.group(0), results);
}

}  // namespace weir::bench

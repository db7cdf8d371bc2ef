// `weir bench signals`: the signals arena's lifetime, ratios and targets.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <exception>

#include "signal_cases.hpp"

namespace weir::bench {

namespace {

constexpr double kWakeP99Ratio = 1.2;     // weir's p99 wake latency over the bare futex's, each placement
constexpr double kSpinP50Ns = 1000.0;     // spinning watcher with a spare core: p50 wake latency

// Every ratio and target of the report, in one place.
constexpr Comparison kComparisons[] = {
    {"signals.wake.1cpu.p50", "base.futex.1cpu.p50", Goal::none, 0.0},
    {"signals.wake.1cpu.p99", "base.futex.1cpu.p99", Goal::ratio_at_most, kWakeP99Ratio},
    {"signals.wake.1cpu.p999", "base.futex.1cpu.p999", Goal::none, 0.0},
    {"signals.wake.1cpu.max", "base.futex.1cpu.max", Goal::none, 0.0},
    {"signals.wake.2cpu.p50", "base.futex.2cpu.p50", Goal::none, 0.0},
    {"signals.wake.2cpu.p99", "base.futex.2cpu.p99", Goal::ratio_at_most, kWakeP99Ratio},
    {"signals.wake.2cpu.p999", "base.futex.2cpu.p999", Goal::none, 0.0},
    {"signals.wake.2cpu.max", "base.futex.2cpu.max", Goal::none, 0.0},
    {"signals.wake.spin.2cpu.p50", "base.spin.2cpu.p50", Goal::below_ns, kSpinP50Ns},
    {"signals.wake.spin.2cpu.p99", "base.spin.2cpu.p99", Goal::none, 0.0},
    {"signals.wake.spin.2cpu.p999", "base.spin.2cpu.p999", Goal::none, 0.0},
    {"signals.wake.spin.2cpu.max", "base.spin.2cpu.max", Goal::none, 0.0},
    {"signals.publish.1group", "kv.set.0groups", Goal::none, 0.0},
    {"signals.publish.8groups", "kv.set.0groups", Goal::none, 0.0},
    {"signals.publish.64groups", "kv.set.0groups", Goal::none, 0.0},
    {"signals.publish.1group.1waiter", "base.futex.wake.1waiter", Goal::none, 0.0},
};

}  // namespace

int run_signals_suite(const Config& config) {
  const std::string arena_name = "bench.signals." + std::to_string(::getpid());
  core::ArenaOptions options;
  options.slot_count = kSignalSlots;
  options.key_bytes = kArenaKeyBytes;
  options.value_bytes = kSignalValueBytes;
  options.vector_dim = 0;        // no vector partition: this suite never touches it

  Results results;
  const bool ran = run_in_arena(arena_name, options, [&](core::Arena& arena) {
    // Publish first: it needs every group of the table, which a killed wake child could hold one of.
    run_publish_cases(config, arena, arena_name, results);
    run_wake_cases(config, arena, arena_name, results);
  });
  if (!ran) return kExitFailed;

  // Report wake latency first, as the comparison table does.
  const auto is_wake = [](const Row& row) {
    return row.name.starts_with("signals.wake.") || row.name.starts_with("base.futex.1cpu.") ||
           row.name.starts_with("base.futex.2cpu.") || row.name.starts_with("base.spin.");
  };
  std::stable_partition(results.rows().begin(), results.rows().end(), is_wake);
  compare(results, kComparisons);
  if (config.json) {
    print_json(results.rows());
  } else {
    char title[256];
    std::snprintf(title, sizeof title,
                  "weir bench signals: median/min/max of %d repetitions%s; wake: one-way latency "
                  "percentiles in ns over %llu round trips each; publish: ns/op over ~%lld ms each",
                  config.reps, config.quick ? " (--quick)" : "",
                  static_cast<unsigned long long>(wake_round_trips(config)),
                  static_cast<long long>(config.rep_ns() / 1'000'000));
    print_table(results.rows(), title);
  }
  return exit_status(results);
}

}  // namespace weir::bench

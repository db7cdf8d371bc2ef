#pragma once
// The signals suite: wake latency of signal groups against a bare futex and a bare spin, and the
// cost of a publish by the groups and waiters it reaches. Private to bench/.
#include <cstdint>
#include <string>

#include "harness.hpp"
#include "weir/core/arena.hpp"

namespace weir::bench {

inline constexpr std::uint64_t kWakeRoundTrips = 100'000;  // timed round trips per repetition (--quick: a tenth)
inline constexpr std::uint64_t kWakeLeadInTrips = 100;     // untimed round trips before them, each repetition
inline constexpr std::int64_t kWakeSpinNs = 50'000;        // spin_ns of the spinning watcher
inline constexpr std::uint32_t kSignalSlots = 1024;        // slots of the signals arena
inline constexpr std::uint32_t kSignalValueBytes = 64;     // value_bytes of the signals arena

/// Round trips timed per repetition under this config.
[[nodiscard]] inline std::uint64_t wake_round_trips(const Config& config) noexcept {
  return config.quick ? kWakeRoundTrips / static_cast<std::uint64_t>(kQuickDivisor) : kWakeRoundTrips;
}

/// `weir bench signals`: makes the arena, runs every case, removes the arena, prints the report.
/// Returns kExitOk, or kExitFailed when a call, a child or the set-up failed.
[[nodiscard]] int run_signals_suite(const Config& config);

/// Ping-pong between this process and a forked child, on signal groups and on bare words, with
/// both on one CPU, on two CPUs, and spinning on two CPUs. Adds the signals.wake.* and base.* rows.
void run_wake_cases(const Config& config, const core::Arena& arena, const std::string& arena_name,
                    Results& results);

/// KvStore::set on keys matching 0, 1, 8 and 64 label groups with nobody waiting, and on a key
/// whose one group has a watcher asleep in a child, with that line's floor (a bare FUTEX_WAKE of a
/// sleeping child). Adds kv.set.0groups, signals.publish.* and base.futex.wake.1waiter.
void run_publish_cases(const Config& config, const core::Arena& arena, const std::string& arena_name,
                       Results& results);

}  // namespace weir::bench

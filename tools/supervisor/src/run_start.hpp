#pragma once
// The order `weir run` starts a pipeline in: shards (whose inputs exist), then, once the shards'
// output channels exist, recorders and bridge senders; then, once every recorder is registered on
// every channel it records (a lossless recorder then misses nothing a driver writes), the drivers;
// last the shards that read what only a driver makes.
#include <cstdint>
#include <functional>
#include <string>

#include "run_check.hpp"
#include "run_supervisor.hpp"
#include "weir/core/arena.hpp"

namespace weir::supervisor {

inline constexpr std::int64_t kRegisterTimeoutNs = 10'000'000'000;  // recorders' time to register before drivers start

/// Starts a part as a process, or as a thread when it asks and can (else as a process, said in the log).
void start_part(Supervisor& s, const Loaded& l, const PartPlan& plan, const std::function<void(const std::string&)>& log);

/// Starts every part of `l` in the order above. `recorders_started` runs once the recorders and
/// bridges are started, before the wait for their registration (the run record's start).
void start_in_order(Supervisor& s, const Loaded& l, const core::Arena& arena, std::int64_t channel_timeout_ns,
                    const std::function<void()>& recorders_started, const std::function<void(const std::string&)>& log);

}  // namespace weir::supervisor

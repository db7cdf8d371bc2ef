#include "run_start.hpp"

#include <algorithm>
#include <set>
#include <unistd.h>

#include <fmt/format.h>

#include "run_threads.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/clock.hpp"
#include "weir/core/run_control.hpp"
#include "weir/recorder/recorder.hpp"

namespace weir::supervisor {

namespace {

// Waits until every channel a started shard makes exists, or the timeout passes.
void wait_for_shard_outputs(const core::Arena& arena, const Loaded& l, const std::set<std::string>& deferred,
                            Supervisor& s, std::int64_t timeout_ns, const std::function<void(const std::string&)>& log) {
  const std::int64_t deadline = core::monotonic_ns() + timeout_ns;
  for (const auto& [channel, writer] : l.resolved.channel_writer) {
    if (writer.rfind("shard \"", 0) != 0) continue;
    const std::string shard = writer.substr(7, writer.size() - 8);
    if (deferred.count(shard) != 0) continue;
    while (!core::find_channel(arena, channel)) {
      if (core::monotonic_ns() >= deadline) {
        log(fmt::format("channel '{}' does not exist yet; starting the recorders anyway", channel));
        return;
      }
      s.tick(20);
    }
  }
}

// The channels a running recorder matches but has no live consumer row of its own on.
std::vector<std::string> unregistered(const core::Arena& arena, const Loaded& l, const PartState& part) {
  std::vector<std::string> out;
  const auto decl = std::find_if(l.pipeline.records.begin(), l.pipeline.records.end(),
                                 [&](const config::RecordDecl& r) { return r.name == part.plan.name; });
  if (decl == l.pipeline.records.end()) return out;
  const auto pid = static_cast<std::uint32_t>(part.plan.thread ? getpid() : part.pid);
  for (const core::ChannelInfo& c : core::list_channels(arena)) {
    if (std::none_of(decl->channels.begin(), decl->channels.end(),
                     [&](const std::string& p) { return config::glob_match(p, c.name); }))
      continue;
    if (std::none_of(c.consumers.begin(), c.consumers.end(),
                     [&](const core::ConsumerInfo& k) {
                       return k.alive && k.pid == pid && k.name == "recorder" && k.kind == rec::kRecorderKind;
                     }))
      out.push_back(c.name);
  }
  return out;
}

// Waits until every running recorder is registered on every channel it matches and writes (its rows
// named kRecorderKind: they hold every block from then on, while its first file opens), or the timeout.
void wait_registered(const core::Arena& arena, const Loaded& l, Supervisor& s,
                     const std::function<void(const std::string&)>& log) {
  const std::int64_t deadline = core::monotonic_ns() + kRegisterTimeoutNs;
  for (;;) {
    std::string missing;
    for (const auto& p : s.parts()) {
      if (p->plan.role != PartRole::record || p->status != PartStatus::running) continue;
      const std::vector<std::string> channels = unregistered(arena, l, *p);
      if (!channels.empty()) missing += fmt::format("{}{} on {}", missing.empty() ? "" : "; ", p->plan.title, fmt::join(channels, ", "));
    }
    if (missing.empty()) return;
    if (core::monotonic_ns() >= deadline) {
      log(fmt::format("WARNING: recorders not registered after {:.0f} s: {}; starting the drivers anyway: what they "
                      "write before a recorder registers is recorded only while it is still in the ring",
                      static_cast<double>(kRegisterTimeoutNs) / 1e9, missing));
      return;
    }
    s.tick(20);
  }
}

// Controlled runs: the recorders register on their channels only inside a run, so what the drivers
// wait for is every running recorder holding its row in the run control (a run started from then on is
// recorded from its first block), or the timeout.
void wait_joined(const core::Arena& arena, Supervisor& s, const std::function<void(const std::string&)>& log) {
  const std::int64_t deadline = core::monotonic_ns() + kRegisterTimeoutNs;
  const core::RunControl rc(arena);
  for (;;) {
    std::size_t running = 0, joined = 0;
    for (const auto& p : s.parts())
      if (p->plan.role == PartRole::record && p->status == PartStatus::running) ++running;
    for (const core::RunRecorderSeen& r : rc.recorders()) joined += r.alive ? 1 : 0;
    if (joined >= running) return;
    if (core::monotonic_ns() >= deadline) {
      log(fmt::format("WARNING: {} of {} recorder(s) have not joined the run control after {:.0f} s; starting the "
                      "drivers anyway",
                      running - joined, running, static_cast<double>(kRegisterTimeoutNs) / 1e9));
      return;
    }
    s.tick(20);
  }
}

}  // namespace

void start_part(Supervisor& s, const Loaded& l, const PartPlan& plan, const std::function<void(const std::string&)>& log) {
  if (!plan.thread) {
    s.add(plan);
    return;
  }
  auto main = thread_main_for(l.pipeline, plan);
  if (!main) {
    log(fmt::format("cannot run {} as a thread: {}; running it as a process", plan.title, main.error().what));
    PartPlan as_process = plan;
    as_process.thread = false;
    s.add(as_process);
    return;
  }
  s.add(plan, std::move(*main));
}

void start_in_order(Supervisor& s, const Loaded& l, const core::Arena& arena, std::int64_t channel_timeout_ns,
                    const std::function<void()>& recorders_started, const std::function<void(const std::string&)>& log) {
  // Shards in dependency order; one whose input only a driver makes waits for the drivers.
  std::set<std::string> deferred;
  for (const PartPlan& plan : l.parts) {
    if (plan.role != PartRole::shard) continue;
    const auto inputs = l.resolved.shard_inputs.find(plan.name);
    bool ready = true;
    if (inputs != l.resolved.shard_inputs.end())
      for (const std::string& input : inputs->second) {
        const auto writer = l.resolved.channel_writer.find(input);
        const bool by_started_shard = writer != l.resolved.channel_writer.end() && writer->second.rfind("shard \"", 0) == 0 &&
                                      deferred.count(writer->second.substr(7, writer->second.size() - 8)) == 0;
        if (!by_started_shard && !core::find_channel(arena, input)) ready = false;
      }
    if (ready)
      start_part(s, l, plan, log);
    else
      deferred.insert(plan.name);
  }
  wait_for_shard_outputs(arena, l, deferred, s, channel_timeout_ns, log);
  for (const PartPlan& plan : l.parts)
    if (plan.role == PartRole::record || plan.role == PartRole::bridge || plan.role == PartRole::kafka ||
        plan.role == PartRole::ann || plan.role == PartRole::epics || plan.role == PartRole::tango)
      start_part(s, l, plan, log);
  if (recorders_started) recorders_started();
  if (l.pipeline.arena.controlled_runs)
    wait_joined(arena, s, log);
  else
    wait_registered(arena, l, s, log);
  for (const PartPlan& plan : l.parts)
    if (plan.role == PartRole::driver) start_part(s, l, plan, log);
  for (const PartPlan& plan : l.parts)
    if (plan.role == PartRole::shard && deferred.count(plan.name) != 0) start_part(s, l, plan, log);
}

}  // namespace weir::supervisor

#include "run_threads.hpp"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "weir/acq/sim_driver.hpp"
#include "weir/core/arena.hpp"
#include "weir/shard_host/host.hpp"

namespace weir::supervisor {

namespace {

double number_or(const std::map<std::string, std::string>& params, const char* key, double fallback) {
  const auto it = params.find(key);
  return it == params.end() ? fallback : std::strtod(it->second.c_str(), nullptr);
}

core::Result<ThreadMain> sim_main(const config::Pipeline& p, const config::DriverDecl& d) {
  auto options = sim_options(p, d);
  if (!options) return tl::make_unexpected(options.error());
  const acq::SimOptions o = std::move(*options);
  const std::string where = p.arena.name;
  return ThreadMain{[where, o](const std::atomic<bool>& stop) {
    auto arena = core::Arena::open(where);
    if (!arena) return 1;
    auto report = acq::run_sim(*arena, o, stop);
    return report ? 0 : 1;
  }};
}

}  // namespace

core::Result<acq::SimOptions> sim_options(const config::Pipeline& p, const config::DriverDecl& d) {
  acq::SimOptions o;
  o.channels = d.channels;
  for (const auto& c : p.channels)
    if (!d.channels.empty() && c.spec.name == d.channels.front()) {
      o.rate_hz = c.spec.rate_hz;
      o.block_samples = c.spec.samples_per_block;
      o.dtype = c.spec.dtype;
    }
  const auto& params = d.params;
  if (const auto it = params.find("signal"); it != params.end()) {
    auto kind = acq::parse_signal(it->second);
    if (!kind) return tl::make_unexpected(kind.error());
    o.signal.kind = *kind;
  }
  o.signal.seed = static_cast<std::uint64_t>(number_or(params, "seed", 0));
  o.signal.amplitude = number_or(params, "amplitude", o.signal.amplitude);
  o.signal.offset = number_or(params, "offset", o.signal.offset);
  o.signal.frequency_hz = number_or(params, "frequency", o.signal.frequency_hz);
  o.signal.chirp_end_hz = number_or(params, "chirp_to", o.signal.chirp_end_hz);
  o.signal.chirp_sweep_s = number_or(params, "sweep", o.signal.chirp_sweep_s);
  o.signal.pulses.count_rate_hz = number_or(params, "count_rate", o.signal.pulses.count_rate_hz);
  o.signal.pulses.rise_s = number_or(params, "rise", o.signal.pulses.rise_s);
  o.signal.pulses.decay_s = number_or(params, "tau", o.signal.pulses.decay_s);
  o.signal.pulses.baseline_noise = number_or(params, "noise", o.signal.pulses.baseline_noise);
  o.full_scale_v = number_or(params, "full_scale", o.full_scale_v);
  o.fast = params.count("fast") != 0 && params.at("fast") == "true";
  if (auto ok = acq::validate(o); !ok) return tl::make_unexpected(ok.error());
  return o;
}

core::Result<ThreadMain> thread_main_for(const config::Pipeline& p, const PartPlan& plan) {
  for (const auto& d : p.drivers)
    if (d.name == plan.name && d.kind == "sim") return sim_main(p, d);
  for (const auto& s : p.shards) {
    if (s.name != plan.name) continue;
    shard_host::HostOptions o;
    o.shard = s.kind;
    o.input = s.input;
    for (const auto& [key, value] : s.params) o.params.push_back({key, value});
    o.output_base = s.output;
    auto policy = core::parse_policy(s.policy);
    if (!policy) return tl::make_unexpected(policy.error());
    o.policy = *policy;
    o.instance = s.name;
    if (s.batch_ms >= 0) o.batch_ns = std::llround(s.batch_ms * 1e6);
    const std::string where = p.arena.name;
    return ThreadMain{[where, o](const std::atomic<bool>& stop) {
      auto arena = core::Arena::open(where);
      if (!arena) return 1;
      auto report = shard_host::run_host(*arena, o, stop);
      return report ? 0 : 1;
    }};
  }
  return core::fail(core::Errc::invalid_argument,
                    fmt::format("{} has no in-process form in this build", plan.title));
}

}  // namespace weir::supervisor

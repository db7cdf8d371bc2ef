#include "run_status.hpp"

#include <time.h>

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "weir/core/clock.hpp"

namespace weir::supervisor {

RunStatus::RunStatus(const core::Arena& arena, std::set<std::string> sources)
    : arena_(&arena), sources_(std::move(sources)), last_ns_(core::monotonic_ns()) {}

RunTotals RunStatus::sample() {
  RunTotals t;
  std::uint64_t bytes = 0;
  for (const auto& c : core::list_channels(*arena_)) {
    if (sources_.count(c.name) != 0) {
      t.samples += c.samples_written;
      bytes += c.samples_written * core::dtype_bytes(c.dtype);
    }
    t.dropped += c.dropped_at_source;
    for (const auto& k : c.consumers) {
      t.lost += k.blocks_lost;
      t.errors += k.errors;
      t.disk_bytes += k.bytes_out;
      if (k.alive) t.max_lag = std::max(t.max_lag, k.lag);
    }
  }
  const std::int64_t now = core::monotonic_ns();
  const double dt = static_cast<double>(now - last_ns_) / 1e9;
  if (dt > 0 && t.samples >= last_samples_) {
    t.samples_per_s = static_cast<double>(t.samples - last_samples_) / dt;
    t.bytes_per_s = static_cast<double>(bytes - last_bytes_) / dt;
  }
  last_samples_ = t.samples;
  last_bytes_ = bytes;
  last_ns_ = now;
  if (kafka_) t.kafka = KafkaRates::text(kafka_->sample());
  return t;
}

void publish_part(core::KvStore& kv, const PartState& part) {
  const std::string base = std::string(kPartKeyPrefix) + part.plan.name;
  const std::string state = part_status_name(part.status);
  const auto restarts = static_cast<std::uint64_t>(part.restarts);
  (void)kv.set(base + ".state", std::as_bytes(std::span{state.data(), state.size()}), core::ValueType::text);
  (void)kv.set(base + ".restarts", std::as_bytes(std::span{&restarts, 1}), core::ValueType::u64);
  (void)kv.set(base + ".last_exit", std::as_bytes(std::span{part.last_exit.data(), part.last_exit.size()}),
               core::ValueType::text);
}

std::vector<std::string> run_failures(const Supervisor& supervisor, bool at_stop) {
  std::vector<std::string> out;
  for (const auto& p : supervisor.parts()) {
    const PartState& part = *p;
    if (part.status == PartStatus::given_up)
      out.push_back(fmt::format("{} was given up after {} restart(s) (last: {})", part.plan.title, part.restarts, part.last_exit));
    else if (part.status == PartStatus::config_error)
      out.push_back(fmt::format("configuration error: {} refused its settings ({})", part.plan.title, part.last_exit));
    else if (at_stop && part.plan.essential && part.status == PartStatus::backoff)
      out.push_back(fmt::format("essential {} was not running at the stop (last: {}, {} restart(s))", part.plan.title,
                                part.last_exit, part.restarts));
  }
  return out;
}

std::string RunStatus::line(const RunTotals& t, const Supervisor& s, double elapsed_s) {
  int running = 0, restarts = 0, given_up = 0, config_errors = 0;
  std::string down;
  for (const auto& p : s.parts()) {
    running += p->status == PartStatus::running ? 1 : 0;
    restarts += p->restarts;
    given_up += p->status == PartStatus::given_up ? 1 : 0;
    config_errors += p->status == PartStatus::config_error ? 1 : 0;
    if (p->status == PartStatus::backoff || p->status == PartStatus::given_up || p->status == PartStatus::config_error)
      down += fmt::format(" | {} {} ({})", p->plan.name, part_status_name(p->status), p->last_exit);
  }
  const auto secs = static_cast<long>(elapsed_s);
  return fmt::format("{:02}:{:02}:{:02} | in {:.2f} MS/s {:.1f} MB/s | lost {} dropped {} lag {} | errors {} | "
                     "parts {}/{} restarts {}{}{} | disk {:.1f} MiB{}{}",
                     secs / 3600, secs / 60 % 60, secs % 60, t.samples_per_s / 1e6, t.bytes_per_s / 1e6, t.lost,
                     t.dropped, t.max_lag, t.errors, running, s.parts().size(), restarts,
                     given_up != 0 ? fmt::format(" GAVE UP {}", given_up) : std::string{},
                     config_errors != 0 ? fmt::format(" CONFIG ERROR {}", config_errors) : std::string{},
                     static_cast<double>(t.disk_bytes) / 1048576.0, t.kafka, down);
}

std::string RunStatus::summary() const { return summary(core::list_channels(*arena_)); }

std::string RunStatus::summary(const std::vector<core::ChannelInfo>& channels) {
  std::string out;
  for (const auto& c : channels) {
    out += fmt::format("  channel {:<20} written {} blocks ({} samples), dropped at source {}\n", c.name,
                       c.blocks_written, c.samples_written, c.dropped_at_source);
    for (const auto& k : c.consumers)
      out += fmt::format("    {:<24} {:<9} read {} lost {}{}\n", k.name, core::policy_name(k.policy), k.blocks_read,
                         k.blocks_lost, k.bytes_out != 0 ? fmt::format(" wrote {:.1f} MiB", static_cast<double>(k.bytes_out) / 1048576.0) : "");
  }
  return out;
}

}  // namespace weir::supervisor

namespace weir::supervisor {

namespace {

const core::ChannelInfo* find(const std::vector<core::ChannelInfo>& channels, const std::string& name) {
  for (const auto& c : channels)
    if (c.name == name) return &c;
  return nullptr;
}

void add_consumer(PartCost& cost, const core::ChannelInfo& c, const core::ConsumerInfo& k) {
  cost.samples += k.samples_read;
  cost.blocks += k.blocks_read;
  cost.lost += k.blocks_lost;
  cost.proc_p50_ns = std::max(cost.proc_p50_ns, k.proc_p50_ns);
  if (cost.samples_per_block == 0) cost.samples_per_block = c.samples_per_block;
}

const std::vector<std::string>& inputs_of(const std::map<std::string, std::vector<std::string>>& m, const std::string& part) {
  static const std::vector<std::string> kNone;
  const auto it = m.find(part);
  return it == m.end() ? kNone : it->second;
}

}  // namespace

std::vector<PartCost> part_costs(const Supervisor& supervisor, const config::Pipeline& /*pipeline*/,
                                 const config::Resolved& resolved, const std::vector<core::ChannelInfo>& channels) {
  std::vector<PartCost> out;
  for (const auto& p : supervisor.parts()) {
    const PartPlan& plan = p->plan;
    PartCost cost;
    cost.name = plan.name;
    cost.title = plan.title;
    cost.role = role_name(plan.role);
    cost.kind = plan.kind;
    cost.thread = plan.thread;
    cost.cpu = plan.cpu;
    cost.cpu_s = p->cpu_s;
    switch (plan.role) {
      case PartRole::driver:
        for (const auto& [name, writer] : resolved.channel_writer) {  // declared channels and those it makes itself
          if (writer != plan.title) continue;
          if (const core::ChannelInfo* c = find(channels, name)) {
              cost.samples += c->samples_written;
              cost.blocks += c->blocks_written;
              cost.lost += c->dropped_at_source;
              if (cost.samples_per_block == 0) cost.samples_per_block = c->samples_per_block;
            }
        }
        break;
      case PartRole::shard:
        for (const auto& name : inputs_of(resolved.shard_inputs, plan.name))
          if (const core::ChannelInfo* c = find(channels, name))
            for (const auto& k : c->consumers)
              if (k.name == plan.name || k.name == plan.name + "." + name) add_consumer(cost, *c, k);
        break;
      case PartRole::record:
        for (const auto& name : inputs_of(resolved.record_inputs, plan.name))
          if (const core::ChannelInfo* c = find(channels, name))
            for (const auto& k : c->consumers)
              if (k.kind.rfind("record:", 0) == 0) add_consumer(cost, *c, k);
        break;
      case PartRole::bridge:
        for (const auto& name : inputs_of(resolved.bridge_inputs, plan.name))
          if (const core::ChannelInfo* c = find(channels, name))
            for (const auto& k : c->consumers)
              if (k.kind == "bridge:" + plan.name) add_consumer(cost, *c, k);
        break;
      case PartRole::kafka:
        for (const auto& name : inputs_of(resolved.kafka_inputs, plan.name))
          if (const core::ChannelInfo* c = find(channels, name))
            for (const auto& k : c->consumers)
              if (k.kind == "kafka:" + plan.name) add_consumer(cost, *c, k);
        break;
      case PartRole::ann:    // follows keys, not channels: no blocks to count
      case PartRole::epics:  // serves keys and channel snapshots: no consumer rows
      case PartRole::tango:
        break;
    }
    out.push_back(std::move(cost));
  }
  return out;
}

std::string budget_table(const RunReport& report) {
  struct Stage {
    int parts = 0;
    double cpu_s = 0;
    std::uint64_t samples = 0, blocks = 0, lost = 0;
  };
  std::vector<std::pair<std::string, Stage>> stages;  // in the order parts started
  double used_s = report.supervisor_cpu_s;
  for (const PartCost& p : report.parts) {
    const std::string stage = p.role + " " + p.kind;
    auto it = std::find_if(stages.begin(), stages.end(), [&](const auto& s) { return s.first == stage; });
    if (it == stages.end()) it = stages.insert(stages.end(), {stage, Stage{}});
    ++it->second.parts;
    it->second.cpu_s += p.cpu_s;
    it->second.samples += p.samples;
    it->second.blocks += p.blocks;
    it->second.lost += p.lost;
    used_s += p.cpu_s;
  }
  const double had_s = report.run_s * std::max(report.cpus, 1);
  const auto pct = [](double part, double whole) { return whole > 0 ? 100 * part / whole : 0.0; };
  std::string out = fmt::format(
      "  CPU budget: {:.1f} CPU-s used of {:.1f} ({} CPU(s) x {:.1f} s), {:.0f} %\n"
      "    {:<22} {:>5} {:>8} {:>7} {:>7} {:>10} {:>10} {:>8}\n",
      used_s, had_s, report.cpus, report.run_s, pct(used_s, had_s), "stage", "parts", "cpu s", "% used", "% had",
      "ns/sample", "blocks", "lost");
  for (const auto& [name, s] : stages)
    out += fmt::format("    {:<22} {:>5} {:>8.2f} {:>6.1f}% {:>6.1f}% {:>10.2f} {:>10} {:>8}\n", name, s.parts, s.cpu_s,
                       pct(s.cpu_s, used_s), pct(s.cpu_s, had_s),
                       s.samples != 0 ? s.cpu_s * 1e9 / static_cast<double>(s.samples) : 0.0, s.blocks, s.lost);
  out += fmt::format("    {:<22} {:>5} {:>8.2f} {:>6.1f}% {:>6.1f}%\n", "weir run itself", 1, report.supervisor_cpu_s,
                     pct(report.supervisor_cpu_s, used_s), pct(report.supervisor_cpu_s, had_s));
  return out;
}

}  // namespace weir::supervisor

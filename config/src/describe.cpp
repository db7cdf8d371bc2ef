// `weir check`: the resolved pipeline as text for people.
#include <algorithm>

#include <fmt/format.h>

#include "weir/config/pipeline.hpp"

namespace weir::config {

namespace {

std::string joined(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : ", ") + i;
  return s.empty() ? "-" : s;
}

std::string params_text(const std::map<std::string, std::string>& params) {
  std::string s;
  for (const auto& [k, v] : params) s += fmt::format(" {}={}", k, v);
  return s;
}

std::string outputs_of(const Resolved& r, const std::string& part) {
  std::vector<std::string> out;
  for (const auto& [channel, writer] : r.channel_writer)
    if (writer == part) out.push_back(channel);
  return joined(out);
}

double to_mib(std::uint64_t bytes) { return static_cast<double>(bytes) / 1048576.0; }

}  // namespace

std::string describe(const Pipeline& p, const Resolved& r) {
  std::string s = fmt::format("pipeline {}\n", p.file);
  const core::ArenaOptions& o = p.arena.options;
  if (p.arena.attach)
    s += fmt::format("arena '{}': attached, not created\n", p.arena.name);
  else
    s += fmt::format("arena '{}': {:.1f} MiB ({} key slots x {} B, {} of {} channels, {:.1f} of {:.1f} MiB channel pool{}, "
                     "{} of {} consumer rows{})\n",
                     p.arena.name, to_mib(r.arena_bytes), o.slot_count, o.value_bytes, r.channels.size(),
                     o.channel_capacity, to_mib(r.channel_bytes), to_mib(r.pool_bytes),
                     p.arena.pool_given ? "" : " sized from the channels", r.consumers_needed,
                     o.consumer_capacity, o.numa_node >= 0 ? fmt::format(", NUMA node {}", o.numa_node) : "");
  s += fmt::format("channels ({}):\n", r.channels.size());
  for (const auto& c : r.channels) {
    const auto w = r.channel_writer.find(c.name);
    s += fmt::format("  {:<20} {:<4} {:>10.6g} Hz  {} x {} blocks  {:<6} written by {}\n", c.name,
                     core::dtype_name(c.dtype), c.rate_hz, c.samples_per_block, c.ring_blocks, c.units,
                     w != r.channel_writer.end() ? w->second : std::string("nobody"));
    for (const auto& d : p.channels)
      if (d.spec.name == c.name && d.calibration)
        s += fmt::format("  {:<20} calibrated: {} = {} + {} x raw\n", "", d.calibration->units,
                         d.calibration->offset, d.calibration->scale);
  }
  const EntryDecl& e = p.entry;
  if (!e.title.empty() || !e.definition.empty() || !e.default_plot.empty() || p.source)
    s += fmt::format("recordings: title \"{}\", definition {}, default plot {}{}\n", e.title,
                     e.definition.empty() ? "NXentry" : e.definition,
                     e.default_plot.empty() ? "the first sample channel" : e.default_plot,
                     p.source ? fmt::format(", source \"{}\" ({}, {})", p.source->name,
                                            p.source->type.empty() ? "no type" : p.source->type,
                                            p.source->probe.empty() ? "no probe" : p.source->probe)
                              : std::string());
  s += "parts, in start order:\n";
  for (const auto& d : p.drivers) {
    std::vector<std::string> writes = d.channels;  // those it names, then those it makes from its settings
    for (const auto& [channel, writer] : r.channel_writer)
      if (writer == "driver \"" + d.name + "\"" && std::find(writes.begin(), writes.end(), channel) == writes.end())
        writes.push_back(channel);
    s += fmt::format("  driver \"{}\" ({}) {}  writes {}{}\n", d.name, d.kind, d.thread ? "thread " : "process",
                     joined(writes), params_text(d.params));
  }
  for (const auto& sh : p.shards) {
    const auto in = r.shard_inputs.find(sh.name);
    s += fmt::format("  shard \"{}\" ({}) {}  reads {} ({}) -> {}{}\n", sh.name, sh.kind,
                     sh.thread ? "thread " : "process", in != r.shard_inputs.end() ? joined(in->second) : "-",
                     sh.policy, outputs_of(r, "shard \"" + sh.name + "\""), params_text(sh.params));
  }
  for (const auto& rec : p.records) {
    const auto in = r.record_inputs.find(rec.name);
    s += fmt::format("  record \"{}\" ({}) {}  reads {} ({}) -> {}{}\n", rec.name, rec.kind,
                     rec.thread ? "thread " : "process", in != r.record_inputs.end() ? joined(in->second) : "-",
                     rec.policy, rec.out, params_text(rec.params));
  }
  for (const auto& br : p.bridges) {
    const auto in = r.bridge_inputs.find(br.name);
    s += fmt::format("  bridge \"{}\" ({}) {}  reads {} ({})\n", br.name, br.kind, br.thread ? "thread " : "process",
                     in != r.bridge_inputs.end() ? joined(in->second) : "-", joined(br.channels));
  }
  for (const auto& k : p.kafkas) {
    const auto in = r.kafka_inputs.find(k.name);
    const auto setting = [&](const char* key) {
      const auto it = k.settings.find(key);
      return it == k.settings.end() ? std::string("-") : it->second.as_text();
    };
    s += fmt::format("  kafka \"{}\" ({}) process  reads {} ({}) -> topic {} at {}\n", k.name, k.kind,
                     in != r.kafka_inputs.end() ? joined(in->second) : "-", joined(k.channels), setting("topic"),
                     setting("brokers"));
  }
  for (const auto& a : p.anns)
    s += fmt::format("  ann \"{}\" process  indexes the vectors labelled {}{}\n", a.name, a.part, params_text(a.params));
  for (const auto& server : p.tangos) {
    const auto device = server.settings.find("device");
    s += fmt::format("  tango \"{}\" ({}) process (weir-tango)  serves the device {}\n", server.name, server.kind,
                     device == server.settings.end() ? std::string("-") : device->second.as_text());
  }
  for (const auto& server : p.epics) {
    const auto prefix = server.settings.find("prefix");
    s += fmt::format("  epics \"{}\" ({}) process (weir-epics)  serves PVs under {}\n", server.name, server.kind,
                     prefix == server.settings.end() ? std::string("-") : prefix->second.as_text());
  }
  for (const auto& a : p.alerts) {
    std::string to = a.webhook.empty() ? "" : "POST " + a.webhook;
    if (!a.command.empty()) to += (to.empty() ? "run " : " and run ") + a.command.front();
    s += fmt::format("  alert \"{}\" ({}) in weir run  for {} s, then {}\n", a.name, a.when, a.for_s, to);
  }
  return s;
}

}  // namespace weir::config

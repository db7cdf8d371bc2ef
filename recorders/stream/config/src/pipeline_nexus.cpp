#include "weir/recorder/pipeline_nexus.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <system_error>
#include <utility>

namespace weir::rec {
namespace {

using Settings = std::vector<std::pair<std::string, std::string>>;

// A setting's text, numbers in their shortest form that reads back the same (the pipeline keeps
// them as %.17g: 5e-05, not 5.0000000000000002e-05).
std::string shortest(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v)) return text;
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return r.ec == std::errc() ? std::string(buf, r.ptr) : text;
}

// A setting as text fields: scalars and lists of names as they are (Setting::as_text), nested tables
// flattened as "name.key" and "name[i]".
void flatten(const std::string& name, const config::Setting& s, Settings& out) {
  if (s.type != config::Setting::Type::table || s.is_name_list()) {
    out.emplace_back(name, shortest(s.as_text()));
    return;
  }
  for (std::size_t i = 0; i < s.items.size(); ++i) flatten(name + "[" + std::to_string(i + 1) + "]", s.items[i], out);
  for (const auto& [key, value] : s.fields) flatten(name + "." + key, value, out);
}

ChannelNexus driver_nexus(const config::DriverDecl& d) {
  ChannelNexus c{d.name, d.kind, "driver", {}, {}};
  for (const auto& [key, value] : d.params) c.settings.emplace_back(key, shortest(value));
  for (const auto& [key, value] : d.settings) flatten(key, value, c.settings);
  return c;
}

ChannelNexus shard_nexus(const config::ShardDecl& s) {
  ChannelNexus c{s.name, s.kind, "shard", {{"input", s.input}}, {}};
  for (const auto& [key, value] : s.params) c.settings.emplace_back(key, shortest(value));
  return c;
}

}  // namespace

core::Result<NexusMeta> nexus_from_pipeline(const std::string& text, const std::string& file,
                                            const config::ShardResolver& resolver,
                                            const config::DriverChannels& driver_channels) {
  auto p = config::load_pipeline_text(text, file);
  if (!p) return tl::make_unexpected(p.error());
  NexusMeta m;
  m.title = p->entry.title;
  m.definition = p->entry.definition;
  m.default_plot = p->entry.default_plot;
  if (p->source) m.source = SourceNexus{p->source->name, p->source->type, p->source->probe};
  for (const config::DriverDecl& d : p->drivers)
    for (const std::string& ch : d.channels) m.channels[ch] = driver_nexus(d);
  if (auto resolved = config::resolve(*p, resolver, driver_channels))
    for (const auto& [channel, part] : resolved->channel_writer) {
      if (m.channels.count(channel) != 0) continue;
      for (const config::ShardDecl& s : p->shards)
        if (part == "shard \"" + s.name + "\"") m.channels[channel] = shard_nexus(s);
    }
  for (const config::ChannelDecl& c : p->channels)
    if (c.calibration)
      m.channels[c.spec.name].calibration = ChannelCalibration{c.calibration->scale, c.calibration->offset,
                                                                    c.calibration->units};
  return m;
}

}  // namespace weir::rec

// Cross-checks of a loaded pipeline: who writes each channel, what each shard reads, what each
// recorder matches, and whether the arena is big enough for all of it.
#include <fnmatch.h>

#include <algorithm>
#include <set>

#include <fmt/core.h>

#include "text_units.hpp"
#include "weir/config/arena_room.hpp"
#include "weir/config/fields.hpp"
#include "weir/config/pipeline.hpp"

namespace weir::config {

using core::Result;

bool glob_match(const std::string& pattern, const std::string& name) noexcept {
  return fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
}

namespace {

// Unset in the file, the pool holds the channels with a quarter to spare (rounded up to whole MiB),
// and never less than an arena made by hand: channels made while it runs (a bridge's receiver, a
// `weir sim` started by hand) still find room.
std::uint64_t pool_for(std::uint64_t channel_bytes) {
  const std::uint64_t wanted = channel_bytes + channel_bytes / 4;
  return std::max<std::uint64_t>(core::kDefaultChannelDataBytes, (wanted + (1ULL << 20) - 1) & ~((1ULL << 20) - 1));
}

std::string name_list(const std::vector<core::ChannelSpec>& channels) {
  std::string s;
  for (const auto& c : channels) s += (s.empty() ? "" : ", ") + c.name;
  return s.empty() ? "none" : s;
}

struct Builder {
  const Pipeline& p;
  Resolved r;
  std::map<std::string, Origin> writer_origin;

  const core::ChannelSpec* find(const std::string& name) const {
    for (const auto& c : r.channels)
      if (c.name == name) return &c;
    return nullptr;
  }

  Result<void> add_channel(const core::ChannelSpec& spec, const std::string& writer, const Origin& origin) {
    if (const auto it = r.channel_writer.find(spec.name); it != r.channel_writer.end())
      return tl::make_unexpected(error_at(origin, "two writers for channel '" + spec.name + "': " + writer +
                                                              " and " + it->second + " (" +
                                                              writer_origin[spec.name].where() + ")"));
    if (find(spec.name) == nullptr) r.channels.push_back(spec);
    r.channel_writer[spec.name] = writer;
    writer_origin[spec.name] = origin;
    return {};
  }

  // A shard's input: a channel by name, else every channel carrying it as a label.
  std::vector<std::string> inputs_of(const std::string& input) const {
    if (find(input) != nullptr) return {input};
    std::vector<std::string> out;
    for (const auto& c : r.channels)
      if (std::find(c.labels.begin(), c.labels.end(), input) != c.labels.end()) out.push_back(c.name);
    return out;
  }
};

}  // namespace

Result<Resolved> resolve(const Pipeline& p, const ShardResolver& resolver, const DriverChannels& driver_channels) {
  Builder b{p, {}, {}};
  std::map<std::string, Origin> declared;
  for (const auto& c : p.channels) {
    if (const auto it = declared.find(c.spec.name); it != declared.end())
      return tl::make_unexpected(error_at(c.origin, "channel '" + c.spec.name + "' is declared twice (first at " +
                                                                it->second.where() + ")"));
    declared[c.spec.name] = c.origin;
    b.r.channels.push_back(c.spec);
  }
  std::map<std::string, Origin> part_names;
  const auto unique_part = [&](const PartDecl& part) -> Result<void> {
    if (const auto it = part_names.find(part.name); it != part_names.end())
      return tl::make_unexpected(error_at(part.origin, "two parts named '" + part.name + "' (the other is at " +
                                                                   it->second.where() + "); give one a name = \"...\""));
    part_names[part.name] = part.origin;
    return {};
  };
  std::vector<const char*> channel_names;
  for (const auto& c : p.channels) channel_names.push_back(c.spec.name.c_str());

  for (const auto& d : p.drivers) {
    if (auto ok = unique_part(d); !ok) return tl::make_unexpected(ok.error());
    for (const auto& name : d.channels) {
      const core::ChannelSpec* spec = b.find(name);
      if (spec == nullptr && d.kind != "replay")  // replay declares the channels of its file
        return tl::make_unexpected(error_at(d.origin, "driver \"" + d.name + "\": channel '" + name + "' is not declared" +
                                                                  did_you_mean(name, channel_names)));
      core::ChannelSpec replayed;
      replayed.name = name;
      if (auto ok = b.add_channel(spec != nullptr ? *spec : replayed, "driver \"" + d.name + "\"", d.origin); !ok)
        return tl::make_unexpected(ok.error());
    }
    if (!driver_channels) continue;
    auto implied = driver_channels(d);  // channels the driver makes from its own settings (an EPICS driver's)
    if (!implied) return tl::make_unexpected(implied.error());
    for (const auto& spec : *implied) {
      if (const auto it = declared.find(spec.name); it != declared.end())
        return tl::make_unexpected(error_at(d.origin, "driver \"" + d.name + "\" makes channel '" + spec.name +
                                                          "', which is also declared at " + it->second.where()));
      if (auto ok = b.add_channel(spec, "driver \"" + d.name + "\"", d.origin); !ok) return tl::make_unexpected(ok.error());
    }
  }

  // Shards may read other shards' outputs: resolve in passes until nothing more resolves.
  std::vector<const ShardDecl*> pending;
  for (const auto& s : p.shards) {
    if (auto ok = unique_part(s); !ok) return tl::make_unexpected(ok.error());
    pending.push_back(&s);
  }
  for (bool progress = true; progress && !pending.empty();) {
    progress = false;
    for (auto it = pending.begin(); it != pending.end();) {
      const ShardDecl& s = **it;
      const auto inputs = b.inputs_of(s.input);
      if (inputs.empty()) {
        ++it;
        continue;
      }
      for (const auto& in : inputs) {
        if (!resolver) continue;
        auto outputs = resolver(s, *b.find(in));
        if (!outputs) return tl::make_unexpected(error_at(s.origin, outputs.error().what));
        for (const auto& out : *outputs)
          if (auto ok = b.add_channel(out, "shard \"" + s.name + "\"", s.origin); !ok) return tl::make_unexpected(ok.error());
      }
      b.r.shard_inputs[s.name] = inputs;
      it = pending.erase(it);
      progress = true;
    }
  }
  if (!pending.empty()) {
    const ShardDecl& s = *pending.front();
    std::vector<const char*> known;
    for (const auto& c : b.r.channels) known.push_back(c.name.c_str());
    return tl::make_unexpected(error_at(
        s.origin, "shard \"" + s.name + "\": input '" + s.input + "' is no channel and no label of one" +
                      did_you_mean(s.input, known) + "; channels are: " + name_list(b.r.channels)));
  }

  for (const auto& rec : p.records) {
    if (auto ok = unique_part(rec); !ok) return tl::make_unexpected(ok.error());
    std::vector<std::string> matched;
    for (const auto& pattern : rec.channels) {
      std::size_t hits = 0;
      for (const auto& c : b.r.channels)
        if (glob_match(pattern, c.name)) {
          ++hits;
          if (std::find(matched.begin(), matched.end(), c.name) == matched.end()) matched.push_back(c.name);
        }
      if (hits == 0)
        return tl::make_unexpected(error_at(rec.origin, "record \"" + rec.name + "\": pattern '" + pattern +
                                                                    "' matches no channel; channels are: " +
                                                                    name_list(b.r.channels)));
    }
    b.r.record_inputs[rec.name] = matched;
  }

  // A bridge's patterns may match nothing yet: channels made later join it (another host's receiver
  // is no part of this file). Each channel it follows takes a consumer row.
  for (const auto& br : p.bridges) {
    if (auto ok = unique_part(br); !ok) return tl::make_unexpected(ok.error());
    std::vector<std::string> matched;
    for (const auto& pattern : br.channels)
      for (const auto& c : b.r.channels)
        if (glob_match(pattern, c.name) && std::find(matched.begin(), matched.end(), c.name) == matched.end())
          matched.push_back(c.name);
    b.r.bridge_inputs[br.name] = matched;
  }
  for (const auto& k : p.kafkas) {  // a Kafka sender likewise
    if (auto ok = unique_part(k); !ok) return tl::make_unexpected(ok.error());
    std::vector<std::string> matched;
    for (const auto& pattern : k.channels)
      for (const auto& c : b.r.channels)
        if (glob_match(pattern, c.name) && std::find(matched.begin(), matched.end(), c.name) == matched.end())
          matched.push_back(c.name);
    b.r.kafka_inputs[k.name] = matched;
  }

  for (const auto& e : p.epics)
    if (auto ok = unique_part(e); !ok) return tl::make_unexpected(ok.error());
  for (const auto& t : p.tangos)
    if (auto ok = unique_part(t); !ok) return tl::make_unexpected(ok.error());

  // An ann service indexes vectors: the arena must have them.
  for (const auto& a : p.anns) {
    if (auto ok = unique_part(a); !ok) return tl::make_unexpected(ok.error());
    if (!p.arena.attach && p.arena.options.vector_dim == 0)
      return tl::make_unexpected(error_at(a.origin, "ann \"" + a.part + "\" indexes vectors, but the arena has none; "
                                                    "give it vector_dim = D (the embedding's dims)"));
  }

  // An alert names channels and parts of this pipeline; a disk alert needs a filesystem to watch.
  for (const auto& a : p.alerts) {
    std::vector<const char*> known;
    for (const auto& c : b.r.channels) known.push_back(c.name.c_str());
    for (const auto& name : a.channels)
      if (b.find(name) == nullptr)
        return tl::make_unexpected(error_at(a.origin, "alert \"" + a.name + "\": channel '" + name + "' is no channel of the "
                                                      "pipeline" + did_you_mean(name, known) + "; channels are: " +
                                                      name_list(b.r.channels)));
    std::vector<const char*> parts;
    for (const auto& [name, origin] : part_names) parts.push_back(name.c_str());
    for (const auto& name : a.parts)
      if (part_names.count(name) == 0) {
        std::string list;
        for (const char* q : parts) list += (list.empty() ? "" : ", ") + std::string(q);
        return tl::make_unexpected(error_at(a.origin, "alert \"" + a.name + "\": part '" + name + "' is no part of the "
                                                      "pipeline" + did_you_mean(name, parts) + "; parts are: " +
                                                      (list.empty() ? "none" : list)));
      }
    if ((a.when == "disk_below" || a.when == "disk_filling") && a.paths.empty() && p.records.empty())
      return tl::make_unexpected(error_at(a.origin, "alert \"" + a.name + "\": no recorder's directory to watch; give "
                                                    "paths = {\"/data\"}"));
  }

  // Geometry: the arena must hold every channel, its rings, and every consumer row.
  Resolved& r = b.r;
  for (const auto& c : r.channels) r.channel_bytes += core::channel_footprint(c);
  for (const auto& [shard, inputs] : r.shard_inputs) r.consumers_needed += static_cast<std::uint32_t>(inputs.size());
  for (const auto& [rec, inputs] : r.record_inputs) r.consumers_needed += static_cast<std::uint32_t>(inputs.size());
  for (const auto& [br, inputs] : r.bridge_inputs) r.consumers_needed += static_cast<std::uint32_t>(inputs.size());
  for (const auto& [k, inputs] : r.kafka_inputs) r.consumers_needed += static_cast<std::uint32_t>(inputs.size());
  core::ArenaOptions o = p.arena.options;
  r.pool_bytes = p.arena.pool_given ? o.channel_data_bytes : pool_for(r.channel_bytes);
  o.channel_data_bytes = r.pool_bytes;
  if (!p.arena.attach) {
    if (r.channels.size() > o.channel_capacity)
      return tl::make_unexpected(error_at(
          p.arena.origin, fmt::format("the arena holds {} channels but the pipeline makes {} ({}); set channels = {} or more",
                                          o.channel_capacity, r.channels.size(), name_list(r.channels),
                                          r.channels.size())));
    if (r.channel_bytes > o.channel_data_bytes)
      return tl::make_unexpected(error_at(
          p.arena.origin, fmt::format("the channels' rings need {} but the arena's channel pool is {}; set pool_mib = {} "
                                      "or more, or leave it out to size the pool from the channels",
                                      mib(r.channel_bytes), mib(o.channel_data_bytes), (r.channel_bytes + (1 << 20) - 1) >> 20)));
    if (r.consumers_needed > o.consumer_capacity)
      return tl::make_unexpected(error_at(
          p.arena.origin, fmt::format("the parts register {} consumers but the arena has {} rows; set consumers = {} or more",
                                          r.consumers_needed, o.consumer_capacity, r.consumers_needed + 8)));
    core::ArenaHeader header{};
    if (auto planned = core::plan_layout(o, header); !planned)
      return tl::make_unexpected(error_at(p.arena.origin, planned.error().what));
    r.arena_bytes = header.arena_bytes;
    if (auto room = check_arena_room(p.arena.name, r.arena_bytes, r.pool_bytes); !room)
      return tl::make_unexpected(error_at(p.arena.origin, room.error().what));
  }
  return r;
}

}  // namespace weir::config

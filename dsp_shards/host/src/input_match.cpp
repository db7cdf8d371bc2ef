// Input resolution: a channel name first, else a label matched exactly: a channel carries label L
// when its Bloom mask covers L's mask and its exact label ids hold L's dictionary entry.
#include "weir/shard_host/input_match.hpp"

#include <optional>

#include "weir/core/arena_layout.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/label_dictionary.hpp"
#include "weir/core/signals.hpp"

namespace weir::shard_host {

namespace {

const core::ChannelDesc& channel_desc(const core::Arena& arena, std::uint32_t index) {
  return reinterpret_cast<const core::ChannelDesc*>(arena.region(core::Region::channels))[index];
}

}  // namespace

core::Result<InputMatch> match_input(const core::Arena& arena, std::string_view input) {
  InputMatch match;
  if (core::find_channel(arena, input)) {
    match.channels.emplace_back(input);
    return match;
  }
  match.by_label = true;
  const std::vector<core::ChannelInfo> channels = core::list_channels(arena);
  const std::optional<std::uint32_t> id = core::LabelDictionary(arena).find(input);  // never adds it
  const std::uint64_t mask = core::label_mask(input);
  std::string names;
  for (const core::ChannelInfo& c : channels) {
    names += (names.empty() ? "" : ", ") + c.name;
    const core::ChannelDesc& d = channel_desc(arena, c.index);
    if (id && (d.labels & mask) == mask && (d.label_ids & (std::uint64_t{1} << *id)) != 0)
      match.channels.push_back(c.name);
  }
  if (match.channels.empty())
    return core::fail(core::Errc::not_found, "no channel named or labelled '" + std::string(input) + "' in " +
                                                 arena.location().describe() +
                                                 (names.empty() ? " (it has no channels)" : " (channels: " + names + ")"));
  return match;
}

}  // namespace weir::shard_host

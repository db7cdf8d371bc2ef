// A served channel opened by name (served_channel.hpp).
#include "weir/controls/served_channel.hpp"

#include <cstring>

#include <fmt/format.h>

#include "weir/core/channel.hpp"

namespace weir::controls {

core::Result<ServedChannel> open_served_channel(const core::Arena& arena, std::string_view who, std::string_view list,
                                                const std::string& channel) {
  auto copier = core::BlockCopier::open(arena, channel);
  if (!copier)
    return core::fail(core::Errc::not_found, fmt::format("{}: channel '{}' ({} = {{...}}) is not in the arena: {}", who, channel,
                                                         list, copier.error().what));
  auto index = core::find_channel(arena, channel);
  if (!index) return tl::make_unexpected(index.error());
  const core::ChannelDesc& d = copier->desc();
  std::string units(d.units, strnlen(d.units, sizeof d.units));
  return ServedChannel{std::move(*copier), *index, std::move(units)};
}

}  // namespace weir::controls

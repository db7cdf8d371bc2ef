#pragma once
// The views a page asks for over its WebSocket, as JSON:
//   {"views": [{"name": "det0" | "channel": 3, "kind": "envelope"|"spectrum", "span": S, "offset": O,
//               "columns": C, "trigger": "off"|"rising"|"falling", "level": L}, ...]}
// A view names its channel (resolved to the channel's index at every tick, so it follows the channel
// when its arena is recreated with the channels in another order) or gives its index.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "channel_feed.hpp"

namespace weir::serve {

struct ViewAsk {
  std::string name;  // the channel's name; empty: view.channel is the index asked
  View view;
};

inline constexpr std::size_t kMaxViewsPerSession = 16;

/// The views of one message, at most kMaxViewsPerSession; views that are not objects, or name no
/// channel (no name, and no index below `channel_capacity`), are left out. Not JSON, or no "views"
/// array: nothing (empty, and `ok` false). Pure.
[[nodiscard]] std::vector<ViewAsk> parse_views(std::string_view text, std::uint32_t channel_capacity, bool& ok);

}  // namespace weir::serve

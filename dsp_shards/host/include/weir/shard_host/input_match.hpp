#pragma once
// Which channels a `--input` names: the channel of that name, else every ready channel carrying
// that Bloom label (checked exactly against the label dictionary, so no false positives).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "weir/core/arena.hpp"
#include "weir/core/error.hpp"

namespace weir::shard_host {

struct InputMatch {
  std::vector<std::string> channels;  // in channel-table order
  bool by_label = false;              // false: `input` is a channel name
};

/// Resolves a channel name or a label. Fails naming the input and the arena, and listing the
/// channels there, when nothing matches. Does not add the label to the arena's dictionary.
/// Thread: any.
[[nodiscard]] core::Result<InputMatch> match_input(const core::Arena& arena, std::string_view input);

}  // namespace weir::shard_host

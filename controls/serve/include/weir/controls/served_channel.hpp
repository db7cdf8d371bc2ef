#pragma once
// A channel a server (epics "serve", tango "serve") was asked to serve, opened by name: a copier of its
// blocks, its index in the arena and its units; the error names the part and the list that asked.
#include <cstdint>
#include <string>
#include <string_view>

#include "weir/core/arena.hpp"
#include "weir/core/block_copier.hpp"
#include "weir/core/error.hpp"

namespace weir::controls {

struct ServedChannel {
  core::BlockCopier copier;
  std::uint32_t index = 0;
  std::string units;
};

/// Opens `channel`; `who` is the part as pipelines name it (`tango "serve"`), `list` the setting
/// (`channels`, `spectra`). Not found: "tango "serve": channel 'x' (channels = {...}) is not in the arena: ...".
[[nodiscard]] core::Result<ServedChannel> open_served_channel(const core::Arena& arena, std::string_view who,
                                                              std::string_view list, const std::string& channel);

}  // namespace weir::controls

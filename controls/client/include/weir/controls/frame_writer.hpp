#pragma once
// An item's frame channel (a waveform PV, a spectrum attribute): made when the driver runs alone,
// opened, and written one frame per update.
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/error.hpp"

namespace weir::controls {

/// This host's clock, ns since the Unix epoch. Thread: any.
[[nodiscard]] std::int64_t realtime_ns() noexcept;

/// Makes the channel when the arena lacks it (weir run makes them before its drivers start; a driver
/// run alone makes its own). A channel that cannot be made is left to the open that follows.
/// Thread: control only.
void make_missing_channel(const core::Arena& arena, const core::ChannelSpec& spec);

/// Opens `channel` for writing; `what` names its user in the error ("PV X:Y"). Thread: control only.
[[nodiscard]] core::Result<std::unique_ptr<core::ChannelWriter>> open_writer(const core::Arena& arena,
                                                                             const std::string& part,
                                                                             const std::string& what,
                                                                             const std::string& channel);

struct FrameWrite {
  bool published = false;  // false: the ring refused the block (counted at source by the channel)
  bool truncated = false;  // more values than the frame holds: cut to it
};

/// Publishes `values` as one frame, converted to the channel's dtype, padded with NaN (or 0) to its
/// length, stamped `stamp_ns` (this host's clock when 0). No allocation. Thread: the channel's one writer.
FrameWrite write_frame(core::ChannelWriter& writer, std::span<const double> values, std::int64_t stamp_ns) noexcept;

}  // namespace weir::controls

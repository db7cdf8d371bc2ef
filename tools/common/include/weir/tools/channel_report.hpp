#pragma once
// An arena's channels as `weir ls` and `weir serve` report them: each channel's counters and
// consumers with its activity (the true rate from its own block stamps, at one look), whether its
// writer has stalled, and the JSON and text of its frame shape.
#include <string>
#include <vector>

#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/channel_activity.hpp"

namespace weir::tools {

/// One channel with its activity at one look.
struct ChannelRow {
  core::ChannelInfo info;
  core::ChannelActivity activity;  // known = false when no data block could be read
};

/// Every ready channel of the arena with its activity, in index order. Reads block metadata only,
/// never samples, and never blocks the writers. Thread: any.
[[nodiscard]] std::vector<ChannelRow> look_channels(const core::Arena& arena);

/// The age of the newest block past which a channel's writer counts as stalled: `given_s` when
/// positive, else 2 s or four nominal block periods, whichever is longer. Thread: any.
[[nodiscard]] double stall_after_s(const core::ChannelInfo& channel, double given_s = 0);

/// Whether the newest block is older than stall_after_s(row.info); false while no block is known.
/// Thread: any.
[[nodiscard]] bool stalled(const ChannelRow& row);

/// A framed channel's shape and axis as a JSON object (frames_per_block, frame_elements, axis
/// {name, units, start, step[, values_key]}); "null" for a plain sample channel. Thread: any.
[[nodiscard]] std::string frame_json(const core::FrameShape& frame);

/// A framed channel's shape for people: "frames 1 x 2049 frequency [Hz] 0 + 30.5/bin", or with
/// the axis values in a key "frames 1 x 2049 frequency [Hz] from key K". Requires: frame.framed().
/// Thread: any.
[[nodiscard]] std::string frame_text(const core::FrameShape& frame);

/// One channel as `weir ls --json` lists it: its declaration, counters, rates, newest block age
/// (null when unknown), stalled, frame and every consumer with its counters. Thread: any.
[[nodiscard]] std::string channel_json(const ChannelRow& row);

}  // namespace weir::tools

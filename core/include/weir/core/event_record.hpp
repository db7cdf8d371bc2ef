#pragma once
// Event channels: per-pulse records (a trigger's or an MCA's pulses) as a frame channel of f64
// whose frames are events of kEventFields fields. A block holds the events found in one input
// block (0 .. frames_per_block of them: block samples = events x kEventFields), stamped with that
// input block's time; a writer publishes a block for every input block, empty or not, so a gap
// in the input is a gap in the events and every pulse is counted exactly. The recorder writes an
// event channel as NXevent_data besides its NXdata (docs/design/recording.md, "Events").
#include <cstdint>
#include <string>

#include "weir/core/channel.hpp"

namespace weir::core {

inline constexpr char kEventAxisName[] = "event";  // an event channel's frame axis: its fields
inline constexpr std::uint32_t kEventFields = 4;

/// The fields of one event, in order, each an f64 (integers below 2^53, so exact).
enum class EventField : std::uint32_t {
  time_offset_ns = 0,  // the event's time after its block's realtime stamp, ns (negative for a pulse
                       // that began in an earlier block and was finished in this one)
  height = 1,          // the pulse height, in the event channel's units
  id = 2,              // which detector or input channel saw it (0 for a shard's single input)
  flags = 3,           // kEventFlag* bits
};

inline constexpr std::uint32_t kEventFlagPileup = 1U << 0;      // overlapped another pulse
inline constexpr std::uint32_t kEventFlagOutOfRange = 1U << 1;  // outside the histogram's range
inline constexpr std::uint32_t kEventFlagPartial = 1U << 2;     // cut by a gap or the stop

/// The frame shape of an event channel holding at most `max_events` events a block.
[[nodiscard]] inline FrameShape event_frame(std::uint32_t max_events) {
  FrameShape f;
  f.frames_per_block = max_events;
  f.frame_elements = kEventFields;
  f.axis.name = kEventAxisName;
  f.axis.units = "";
  f.axis.start = 0;
  f.axis.step = 1;
  return f;
}

/// Whether a channel of this dtype and shape is an event channel.
[[nodiscard]] inline bool is_event_channel(Dtype dtype, const FrameShape& f) noexcept {
  return dtype == Dtype::f64 && f.framed() && f.frame_elements == kEventFields && f.axis.name == kEventAxisName;
}

}  // namespace weir::core

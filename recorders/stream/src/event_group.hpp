#pragma once
// An event channel's NXevent_data in one segment: /entry/<channel>_events, beside the channel's
// NXdata (which keeps the blocks and their tables for exact accounting). Each block is a pulse:
// event_time_zero its realtime stamp (ns since the epoch), event_index its first event; each event
// adds event_time_offset (ns after its pulse), event_id, pulse_height and event_flags
// (core/include/weir/core/event_record.hpp; docs/design/recording.md, "Events").
#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "column.hpp"
#include "weir/core/error.hpp"
#include "weir/h5/handle.hpp"

namespace weir::rec {

class EventGroup {
 public:
  EventGroup() = default;  // none: an ordinary channel
  /// Creates /entry/<link>_events under `entry`; `max_events` is the most one block holds.
  [[nodiscard]] static core::Result<EventGroup> create(hid_t entry, const std::string& link, const std::string& units,
                                                       std::uint32_t max_events, const std::string& file);

  [[nodiscard]] bool valid() const noexcept { return group_.valid(); }
  /// Adds a pulse stamped `realtime_ns` with `events` events of kEventFields f64 each. Hot path.
  void commit(std::uint64_t realtime_ns, const std::byte* events, std::uint32_t count) noexcept;
  [[nodiscard]] bool chunk_ready() const noexcept;
  [[nodiscard]] core::Result<void> write_chunks();
  [[nodiscard]] core::Result<void> write_partial();
  void mark_durable() noexcept;
  void roll_back() noexcept;

 private:
  h5::Group group_;
  Column time_zero_, index_, offset_, id_, height_, flags_;
  std::uint64_t events_ = 0;  // events committed so far
};

}  // namespace weir::rec

#pragma once
// The pieces open_recording (and read_segment_tables) are made of: a channel's metadata, its gaps
// table, the channels under /entry.
// Private to the reader. Layout: docs/design/recording.md.
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

#include "reading.hpp"
#include "weir/core/error.hpp"
#include "weir/h5/recording.hpp"

namespace weir::h5::detail {

/// A channel's metadata from the attributes of its `data` (name and link set by the caller).
/// Refuses a missing or unusable dtype, rate or block size, and samples not of the dtype.
[[nodiscard]] core::Result<RecordedChannel> read_metadata(hid_t data, const Place& place);

/// One row of a gaps table, its reason looked up by name in the table's reason_names.
struct GapRead {
  std::uint64_t sequence = 0, blocks = 0, realtime_ns = 0;
  std::uint32_t reason = 0;        // index into kGapReasonNames
  bool dropped_at_source = false;  // blocks that never got sequence numbers: nothing to skip
};

/// The written rows of a channel's gaps table (rows a failed write left unwritten are dropped).
[[nodiscard]] core::Result<std::vector<GapRead>> read_gaps(hid_t group, const Place& place);

/// The names of the members of /entry (`entry`) that are channels: groups not marked as something
/// else (key logs are an NXcollection of NXlog groups; an array key's plot (1.2) is an NXdata with
/// source_keys). Fails naming the file when /entry cannot be listed.
[[nodiscard]] core::Result<std::vector<std::string>> channel_links(hid_t entry, const std::string& path);

}  // namespace weir::h5::detail

#pragma once
// The NeXus fields of a segment's /entry (format 1.6): title, definition, start_time and end_time,
// and the NXinstrument with the NXsource and one NXdetector per channel (h5/recording_format.hpp, "NeXus entry fields").
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

#include "channel_group.hpp"
#include "weir/core/error.hpp"
#include "weir/h5/handle.hpp"
#include "weir/recorder/nexus_meta.hpp"

namespace weir::rec {

class EntryFields {
 public:
  /// Creates every field under `entry` (before SWMR starts: no object can be added later), the
  /// title, definition, source and detectors written, the times empty. title: the title when the
  /// pipeline gives none; nexus: the pipeline's metadata (null: none). what: the entry in errors
  /// ("run.h5 /entry").
  [[nodiscard]] static core::Result<EntryFields> create(hid_t entry, const std::string& title,
                                                        const std::vector<ChannelStatic>& channels,
                                                        const NexusMeta* nexus, const std::string& what);
  EntryFields() = default;
  /// Writes start_time and end_time (ns since the epoch) when they differ from what is written.
  /// Allowed under SWMR (an existing dataset rewritten).
  [[nodiscard]] core::Result<void> write_times(std::uint64_t start_ns, std::uint64_t end_ns);

 private:
  std::string what_;
  h5::Dataset start_, end_;
  std::uint64_t start_ns_ = 0, end_ns_ = 0;  // as written; 0: not yet
};

}  // namespace weir::rec

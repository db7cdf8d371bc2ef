#pragma once
// NeXus metadata a pipeline gives a segment (format 1.6, docs/design/recording.md "NeXus
// metadata"): scalar fields, the NXsource, an NXdetector's part, settings and calibration, the
// calibration attributes of a channel's data, and which NXdata the entry's default names.
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

#include "channel_group.hpp"
#include "weir/core/error.hpp"
#include "weir/h5/handle.hpp"
#include "weir/recorder/nexus_meta.hpp"

namespace weir::rec {

/// A scalar dataset, its storage allocated at once (nothing is allocated for it under SWMR): text
/// (variable-length UTF-8), f64 or u32. what: the dataset in errors.
[[nodiscard]] core::Result<h5::Dataset> scalar_text(hid_t group, const char* name, const std::string& value,
                                                    const std::string& what);
[[nodiscard]] core::Result<h5::Dataset> scalar_f64(hid_t group, const char* name, double value, const std::string& what);
[[nodiscard]] core::Result<h5::Dataset> scalar_u32(hid_t group, const char* name, std::uint32_t value,
                                                   const std::string& what);
/// A 1-D dataset of variable-length UTF-8 texts (one row each), written at once.
[[nodiscard]] core::Result<void> text_list(hid_t group, const char* name, const std::vector<std::string>& values,
                                           const std::string& what);
/// Variable-length UTF-8 text, as every text of the format.
[[nodiscard]] core::Result<h5::Type> text_type(const std::string& what);
[[nodiscard]] core::Result<void> write_text(hid_t dataset, hid_t type, const std::string& value, const std::string& what);

/// /entry/instrument/source (NXsource): name, and type and probe when given.
[[nodiscard]] core::Result<void> create_source(hid_t instrument, const SourceNexus& source, const std::string& what);
/// An NXdetector's part, driver, role and settings group, and its calibration fields (raw_units: the
/// channel's units).
[[nodiscard]] core::Result<void> write_detector_nexus(hid_t detector, const ChannelNexus& channel,
                                                      const std::string& raw_units, const std::string& what);
/// What a channel's NXdata gets beside the layout ChannelGroup makes: units of the block tables, and
/// the calibration attributes of data when the pipeline calibrates the channel. Before SWMR starts.
[[nodiscard]] core::Result<void> write_channel_nexus(hid_t entry, const ChannelStatic& channel, const NexusMeta* nexus,
                                                     const std::string& what);
/// The link name of the NXdata the entry's `default` names: the pipeline's default plot when it is
/// a recorded channel, else the first channel that is not framed, else the first channel; "" without
/// channels.
[[nodiscard]] std::string default_plot(const std::vector<ChannelStatic>& channels, const NexusMeta* nexus);

}  // namespace weir::rec

#pragma once
// The parts of a snapshot file, each written by its own file of this folder; snapshot.cpp calls
// them in order. Layout of everything written here: docs/design/snapshots.md.
#include <hdf5.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/error.hpp"
#include "weir/h5/attribute.hpp"
#include "weir/h5/check.hpp"
#include "weir/h5/dataset.hpp"
#include "weir/h5/handle.hpp"
#include "weir/h5/types.hpp"
#include "weir/snapshot/snapshot.hpp"

namespace weir::rec::detail {

// The HDF5 writing every part uses (weir::h5).
using h5::Appender;
using h5::attr_f64;
using h5::attr_i64;
using h5::attr_text;
using h5::attr_u32_array;
using h5::attr_u64;
using h5::bytes_type;
using h5::create_group;
using h5::enum_type;
using h5::iso8601_ns;
using h5::text_type;
using h5::write_array;
using h5::write_numbers;

/// How a slot, row or block was copied; stored as an HDF5 enum named by kCopyStatusNames.
enum class CopyStatus : std::uint8_t { ok = 0, busy = 1, torn = 2 };
inline constexpr const char* kCopyStatusNames[] = {"ok", "busy", "torn"};

/// The arena's label dictionary, read once: id -> name ("" for a free entry).
struct Labels {
  std::array<std::string, core::kLabelCapacity> names;
  std::array<std::uint64_t, core::kLabelCapacity> masks{};
  /// The names of the label ids set in `ids`, comma-separated.
  [[nodiscard]] std::string names_of(std::uint64_t ids) const;
};
[[nodiscard]] Labels read_labels(const core::Arena& arena);

/// A key copied as live (ok or torn): the vectors pass looks up its row by slot and generation.
struct LiveKey {
  std::uint32_t slot = 0;
  std::uint32_t generation = 0;
  std::string key;
};

/// A channel or key name as an HDF5 link name: '%', '/' and a leading '.' are %-escaped.
[[nodiscard]] std::string link_name(const std::string& name);

/// /arena: header and geometry as attributes, the region table, the attached pids.
[[nodiscard]] core::Result<void> write_arena(hid_t file, const core::Arena& arena);
/// /labels, /groups and /consumers tables.
[[nodiscard]] core::Result<void> write_labels(hid_t file, const Labels& labels);
[[nodiscard]] core::Result<void> write_groups(hid_t file, const core::Arena& arena, SnapshotStats& stats);
[[nodiscard]] core::Result<void> write_consumers(hid_t file, const core::Arena& arena,
                                                 const std::vector<core::ChannelInfo>& channels, SnapshotStats& stats);
/// /keys: every slot holding a key (or held by a writer), each copied under its seqlock.
[[nodiscard]] core::Result<void> write_keys(hid_t file, const core::Arena& arena, const SnapshotOptions& options,
                                            const Labels& labels, std::vector<LiveKey>& live, SnapshotStats& stats);
/// /vectors: the vector of every live key that has one.
[[nodiscard]] core::Result<void> write_vectors(hid_t file, const core::Arena& arena, const SnapshotOptions& options,
                                               const std::vector<LiveKey>& live, SnapshotStats& stats);
/// /channels/<name>: descriptor attributes and the last blocks of each channel.
[[nodiscard]] core::Result<void> write_channels(hid_t file, const core::Arena& arena, const SnapshotOptions& options,
                                                const Labels& labels, const std::vector<core::ChannelInfo>& channels,
                                                SnapshotStats& stats);

}  // namespace weir::rec::detail

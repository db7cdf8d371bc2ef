#pragma once
// How an arena's geometry is shown, shared by `weir create` and `weir info`.
#include <string>

#include "weir/core/arena_layout.hpp"

namespace weir::tools {

/// Width of the label column in the human output of create and info.
inline constexpr int kLabelWidth = 12;
/// Spaces between the columns of a table (ls, keys).
inline constexpr int kColumnGap = 2;

/// The geometry as one JSON object: slot_count, key_bytes, value_bytes, slot_stride, max_probe,
/// group_count, channel_capacity, channel_data_bytes, consumer_capacity, vector_count, vector_dim,
/// attach_capacity.
[[nodiscard]] std::string geometry_json(const core::Geometry& geometry);

/// Prints the geometry for people, one labelled line per area, indented two spaces.
void print_geometry(const core::Geometry& geometry);

}  // namespace weir::tools

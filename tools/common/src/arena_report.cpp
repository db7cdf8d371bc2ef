#include "weir/tools/arena_report.hpp"

#include <fmt/format.h>

#include "weir/tools/output.hpp"

namespace weir::tools {

std::string geometry_json(const core::Geometry& geometry) {
  JsonObject out;
  out.number("slot_count", geometry.slot_count)
      .number("key_bytes", geometry.key_bytes)
      .number("value_bytes", geometry.value_bytes)
      .number("slot_stride", geometry.slot_stride)
      .number("max_probe", geometry.max_probe)
      .number("group_count", geometry.group_count)
      .number("channel_capacity", geometry.channel_capacity)
      .number("channel_data_bytes", geometry.channel_data_bytes)
      .number("consumer_capacity", geometry.consumer_capacity)
      .number("vector_count", geometry.vector_count)
      .number("vector_dim", geometry.vector_dim)
      .number("attach_capacity", geometry.attach_capacity);
  return out.str();
}

void print_geometry(const core::Geometry& geometry) {
  fmt::print("  {:<{}}{} (keys up to {} B, values up to {} B, stride {} B, probe window {})\n", "slots", kLabelWidth,
             geometry.slot_count, geometry.key_bytes, geometry.value_bytes, geometry.slot_stride,
             geometry.max_probe);
  fmt::print("  {:<{}}{} (channel pool {})\n", "channels", kLabelWidth, geometry.channel_capacity,
             human_bytes(geometry.channel_data_bytes));
  fmt::print("  {:<{}}{}\n", "consumers", kLabelWidth, geometry.consumer_capacity);
  fmt::print("  {:<{}}{} x {} float32\n", "vectors", kLabelWidth, geometry.vector_count, geometry.vector_dim);
  fmt::print("  {:<{}}{}, attach table {} rows\n", "groups", kLabelWidth, geometry.group_count,
             geometry.attach_capacity);
}

}  // namespace weir::tools

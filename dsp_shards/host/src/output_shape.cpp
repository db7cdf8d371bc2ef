#include "weir/shard_host/output_shape.hpp"

#include <cstring>
#include <string>

namespace weir::shard_host {

namespace {

template <std::size_t N>
std::string text(const char (&field)[N]) {
  const void* end = std::memchr(field, '\0', N);
  return end == nullptr ? std::string(field, N) : std::string(field, static_cast<const char*>(end));
}

}  // namespace

core::FrameShape frame_shape(const weir_shard_output& o) {
  core::FrameShape shape;
  if (o.kind != WEIR_OUTPUT_CHANNEL || o.frame_elements == 0) return shape;
  shape.frames_per_block = o.samples_per_block / o.frame_elements;
  shape.frame_elements = o.frame_elements;
  shape.axis.name = text(o.axis.name);
  shape.axis.units = text(o.axis.units);
  shape.axis.start = o.axis.start;
  shape.axis.step = o.axis.step;
  return shape;
}

core::ArrayShape array_shape(const weir_shard_output& o) noexcept {
  core::ArrayShape shape;
  if (o.kind != WEIR_OUTPUT_KEY || o.key_type != WEIR_KEY_ARRAY) return shape;
  shape.elem = static_cast<core::Dtype>(o.array_dtype);  // the same numbers, by the ABI's word
  shape.rank = o.array_rank;
  shape.dims = {o.array_dims[0], o.array_rank == 2 ? o.array_dims[1] : 0U};
  return shape;
}

}  // namespace weir::shard_host

#include "weir/dsp/shard_outputs.hpp"

#include <cmath>
#include <cstring>
#include <string>

#include "weir/dsp/shard_adapter.hpp"

namespace weir::dsp {

namespace {

tl::unexpected<core::Error> refuse(std::string why) { return core::fail(core::Errc::invalid_argument, std::move(why)); }

std::string output_name(const weir_shard_output& out) {
  const void* end = std::memchr(out.name, '\0', sizeof out.name);
  return end == nullptr ? std::string(out.name, sizeof out.name) : std::string(out.name);
}

}  // namespace

std::uint32_t abi_dtype_bytes(std::uint32_t dtype) noexcept {
  switch (dtype) {
    case WEIR_DTYPE_I8:
    case WEIR_DTYPE_U8: return 1;
    case WEIR_DTYPE_I16:
    case WEIR_DTYPE_U16: return 2;
    case WEIR_DTYPE_I32:
    case WEIR_DTYPE_U32:
    case WEIR_DTYPE_F32: return 4;
    case WEIR_DTYPE_I64:
    case WEIR_DTYPE_F64:
    case WEIR_DTYPE_C64: return 8;
    default: return 0;
  }
}

core::Result<void> set_frames(weir_shard_output& out, std::uint32_t frame_elements, const OutputAxis& axis) {
  const std::string what = "output '" + output_name(out) + "'";
  if (out.kind != WEIR_OUTPUT_CHANNEL) return refuse(what + ": only a channel holds frames");
  if (frame_elements == 0 || out.samples_per_block % frame_elements != 0)
    return refuse(what + ": " + std::to_string(out.samples_per_block) + " samples per block are not a whole number of " +
                  std::to_string(frame_elements) + "-element frames");
  if (!std::isfinite(axis.start) || !std::isfinite(axis.step))
    return refuse(what + ": the axis start and step must be finite numbers");
  weir_shard_axis shaped{};
  shaped.start = axis.start;
  shaped.step = axis.step;
  if (!put_text(shaped.name, axis.name) || !put_text(shaped.units, axis.units))
    return refuse(what + ": axis name '" + std::string(axis.name) + "' or units '" + std::string(axis.units) +
                  "' longer than " + std::to_string(sizeof shaped.name - 1) + " bytes");
  out.frame_elements = frame_elements;
  out.axis = shaped;
  return {};
}

core::Result<void> set_array(weir_shard_output& out, std::uint32_t dtype, std::span<const std::uint32_t> dims) {
  const std::string what = "output '" + output_name(out) + "'";
  if (out.kind != WEIR_OUTPUT_KEY) return refuse(what + ": only a key holds an array");
  const std::uint32_t element = abi_dtype_bytes(dtype);
  if (element == 0) return refuse(what + ": unknown array element dtype " + std::to_string(dtype));
  if (dims.empty() || dims.size() > 2) return refuse(what + ": an array has rank 1 or 2, not " + std::to_string(dims.size()));
  std::uint64_t bytes = element;
  for (const std::uint32_t d : dims) {
    if (d == 0) return refuse(what + ": an array dimension is 0");
    bytes *= d;
  }
  out.key_type = WEIR_KEY_ARRAY;
  out.array_dtype = dtype;
  out.array_rank = static_cast<std::uint32_t>(dims.size());
  out.array_dims[0] = dims[0];
  out.array_dims[1] = dims.size() > 1 ? dims[1] : 0;
  out.max_bytes = bytes;
  return {};
}

}  // namespace weir::dsp

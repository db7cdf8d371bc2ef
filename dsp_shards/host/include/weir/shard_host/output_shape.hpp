#pragma once
// A declared output's shape (shard ABI version 2) in core's terms: a channel's frames and axis as
// core::FrameShape, an array key's element dtype and dims as core::ArrayShape. The host creates
// channels and writes keys with them; `weir check` shows the same shapes before anything runs.
#include "weir/core/channel.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/shard.h"

namespace weir::shard_host {

/// The frame shape of channel output `o`: plain (frames_per_block 0) when frame_elements is 0;
/// else samples_per_block / frame_elements frames of frame_elements along o.axis. Texts are read
/// up to their terminating zero (or the field's end). Requires: a declaration the host accepted
/// (frame_elements divides samples_per_block). Thread: any.
[[nodiscard]] core::FrameShape frame_shape(const weir_shard_output& o);

/// The shape of WEIR_KEY_ARRAY output `o` (element dtype, rank, dims); rank 0 for any other key.
/// Thread: any.
[[nodiscard]] core::ArrayShape array_shape(const weir_shard_output& o) noexcept;

}  // namespace weir::shard_host

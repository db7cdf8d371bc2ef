#pragma once
// The built-in shards of the event family, with the same table a shard shared object returns from
// weir_shard_entry (weir/shard.h). Kinds, parameters and outputs: dsp_shards/events/README.md.
#include <cstdint>

#include "weir/shard.h"

extern "C" {

/// Kind "stats": mean, RMS, standard deviation, min, max and peak-to-peak per block and over a
/// sliding window, as f64 keys. NULL when host_abi_version is not this build's. Thread: any.
const weir_shard_api* weir_builtin_stats(uint32_t host_abi_version);

/// Kind "trigger": level / edge trigger with hysteresis, pre/post capture and hold-off; one f32
/// channel block per capture and a u64 trigger count key. NULL on an ABI mismatch. Thread: any.
const weir_shard_api* weir_builtin_trigger(uint32_t host_abi_version);

/// Kind "mca": trapezoidal pulse-height analysis with pile-up rejection; a u32 histogram key, live
/// and dead time, accepted and piled-up counts. NULL on an ABI mismatch. Thread: any.
const weir_shard_api* weir_builtin_mca(uint32_t host_abi_version);

}  // extern "C"

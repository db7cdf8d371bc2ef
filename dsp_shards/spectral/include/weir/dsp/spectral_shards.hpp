#pragma once
// The spectral family's built-in shards, behind the same C ABI (weir/shard.h) as a plugin's:
//   fft     windowed, averaged one-sided spectra of a channel (amplitude, power or PSD, dB)
//   filter  FIR (windowed sinc), biquad (RBJ), DC removal, decimation
// A shard host lists these entry functions in its table of built-in kinds.
#include <cstdint>

#include "weir/shard.h"

extern "C" {

/// The "fft" shard's table; NULL when host_abi_version is not WEIR_SHARD_ABI_VERSION. Thread: any.
const weir_shard_api* weir_builtin_fft(uint32_t host_abi_version);

/// The "filter" shard's table; NULL when host_abi_version is not WEIR_SHARD_ABI_VERSION. Thread: any.
const weir_shard_api* weir_builtin_filter(uint32_t host_abi_version);

}

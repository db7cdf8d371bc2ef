#pragma once
// The HDF5 type of a channel's samples, in memory and in files: native integers and floats, and
// for c64 the recording format's compound {r: f32, i: f32} (h5py reads it as complex64).
#include <hdf5.h>

#include "weir/core/arena_layout.hpp"
#include "weir/h5/handle.hpp"

namespace weir::h5 {

/// An invalid type for a dtype out of range (a corrupt arena): the caller's create or read fails
/// and says so. Thread: one per process, as all HDF5 calls.
[[nodiscard]] Type sample_type(core::Dtype dtype);

/// Whether a stored sample type is what `dtype` says: same class, size and sign (c64: a compound
/// of two f32). Thread: one per process.
[[nodiscard]] bool holds_dtype(hid_t type, core::Dtype dtype);

}  // namespace weir::h5

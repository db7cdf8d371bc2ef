#pragma once
// Checked HDF5 calls: each failure becomes an Error that names the call, the object and HDF5's own
// reason ("H5Dcreate2 run.h5 /entry/adc0/data: <HDF5's innermost messages>"). Cold path only.
// Thread: one per process (serial HDF5).
#include <hdf5.h>

#include <string_view>

#include "weir/core/error.hpp"
#include "weir/h5/handle.hpp"

namespace weir::h5 {

/// An io_error naming `call` and `what`, with HDF5's error stack (which it clears).
[[nodiscard]] core::Error error(std::string_view call, std::string_view what);

/// Owns `id` as an H (File, Dataset, ...), or fails naming call and what when id < 0.
template <class H>
[[nodiscard]] core::Result<H> check(hid_t id, std::string_view call, std::string_view what) {
  if (id < 0) return tl::make_unexpected(error(call, what));
  return H{id};
}

/// Fails naming call and what when rc < 0.
[[nodiscard]] core::Result<void> check(herr_t rc, std::string_view call, std::string_view what);

}  // namespace weir::h5

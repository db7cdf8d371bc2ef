#pragma once
// HDF5 datatypes weir writes beside sample data: text, bytes, enumerations, and the native type of
// each number type it stores. Thread: one per process (serial HDF5).
#include <hdf5.h>

#include <cstdint>
#include <span>
#include <type_traits>

#include "weir/h5/handle.hpp"

namespace weir::h5 {

/// A variable-length UTF-8 string type (h5py reads attributes of it as str, table fields as bytes).
[[nodiscard]] Type text_type();
/// A string of `width` bytes, NUL-padded, in `cset` (h5py: bytes).
[[nodiscard]] Type fixed_text_type(std::uint32_t width, H5T_cset_t cset = H5T_CSET_UTF8);
/// A variable-length sequence of bytes (h5py: a uint8 array per element).
[[nodiscard]] Type bytes_type();
/// An 8-bit enumeration with the given names for 0, 1, 2, ... (h5py: h5py.check_enum_dtype).
[[nodiscard]] Type enum_type(std::span<const char* const> names);

/// The native HDF5 type of T: one of the predefined types, never closed.
template <class T>
[[nodiscard]] hid_t native_type() noexcept {
  if constexpr (std::is_same_v<T, std::uint64_t>) {
    return H5T_NATIVE_UINT64;
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    return H5T_NATIVE_INT64;
  } else if constexpr (std::is_same_v<T, std::uint32_t>) {
    return H5T_NATIVE_UINT32;
  } else if constexpr (std::is_same_v<T, std::uint8_t>) {
    return H5T_NATIVE_UINT8;
  } else if constexpr (std::is_same_v<T, float>) {
    return H5T_NATIVE_FLOAT;
  } else {
    static_assert(std::is_same_v<T, double>, "a number type weir stores");
    return H5T_NATIVE_DOUBLE;
  }
}

}  // namespace weir::h5

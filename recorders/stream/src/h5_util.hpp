#pragma once
// Thin checked wrappers over the HDF5 calls the recorder makes: each failure becomes an Error that
// names the call, the object and HDF5's own reason. Cold path only.
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "weir/core/arena_layout.hpp"
#include "weir/core/error.hpp"
#include "weir/h5/handle.hpp"

namespace weir::rec {

/// "H5Dcreate2 /entry/adc0/data: <HDF5's innermost messages>"; clears HDF5's error stack.
[[nodiscard]] core::Error h5_error(std::string_view call, std::string_view what);
/// Owns id, or fails naming call and what when id < 0.
[[nodiscard]] core::Result<h5::Handle> h5_check(hid_t id, std::string_view call, std::string_view what);
[[nodiscard]] core::Result<void> h5_check(herr_t rc, std::string_view call, std::string_view what);

/// A group with its NeXus class attribute (none when nx_class is empty).
[[nodiscard]] core::Result<h5::Handle> create_group(hid_t parent, const std::string& name, std::string_view nx_class,
                                                     std::string_view what);

/// Attributes: text is a variable-length UTF-8 string; fixed text is `width` bytes, NUL-padded,
/// created so it can be rewritten in place under SWMR (rewrite_fixed_text).
[[nodiscard]] core::Result<void> attr_text(hid_t obj, const char* name, std::string_view value);
[[nodiscard]] core::Result<void> attr_fixed_text(hid_t obj, const char* name, std::string_view value,
                                                 std::uint32_t width);
[[nodiscard]] core::Result<void> rewrite_fixed_text(hid_t obj, const char* name, std::string_view value,
                                                    std::uint32_t width);
[[nodiscard]] core::Result<void> attr_u64(hid_t obj, const char* name, std::uint64_t value);
[[nodiscard]] core::Result<void> rewrite_u64(hid_t obj, const char* name, std::uint64_t value);
[[nodiscard]] core::Result<void> attr_u32(hid_t obj, const char* name, std::uint32_t value);
[[nodiscard]] core::Result<void> attr_f64(hid_t obj, const char* name, double value);

/// Reads a text attribute, variable or fixed length; trailing NULs dropped.
[[nodiscard]] core::Result<std::string> read_text_attr(hid_t obj, const char* name);
[[nodiscard]] core::Result<std::uint64_t> read_u64_attr(hid_t obj, const char* name);

/// An HDF5 link name for any channel or key name: '%' -> "%25", '/' -> "%2F", a lone "." -> "%2E".
[[nodiscard]] std::string encode_name(std::string_view name);

}  // namespace weir::rec

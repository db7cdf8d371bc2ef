#pragma once
// Scalar attributes, written and read with checks. Errors name the HDF5 call and the attribute
// (see check.hpp). Thread: one per process (serial HDF5).
#include <hdf5.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "weir/core/error.hpp"

namespace weir::h5 {

/// Text is a variable-length UTF-8 string.
[[nodiscard]] core::Result<void> attr_text(hid_t object, const char* name, std::string_view value);
/// Fixed text is `width` bytes, NUL-padded, UTF-8: it can be rewritten in place under SWMR, where a
/// new attribute cannot be created (rewrite_fixed_text).
[[nodiscard]] core::Result<void> attr_fixed_text(hid_t object, const char* name, std::string_view value,
                                                 std::uint32_t width);
[[nodiscard]] core::Result<void> attr_u64(hid_t object, const char* name, std::uint64_t value);
[[nodiscard]] core::Result<void> attr_u32(hid_t object, const char* name, std::uint32_t value);
[[nodiscard]] core::Result<void> attr_i64(hid_t object, const char* name, std::int64_t value);
[[nodiscard]] core::Result<void> attr_f64(hid_t object, const char* name, double value);
/// A 1-D u32 attribute of values.size() elements.
[[nodiscard]] core::Result<void> attr_u32_array(hid_t object, const char* name, std::span<const std::uint32_t> values);
/// A 1-D attribute of values.size() variable-length UTF-8 strings (NeXus `axes`).
[[nodiscard]] core::Result<void> attr_text_list(hid_t object, const char* name, std::span<const std::string> values);

/// Overwrite an existing attribute's value in place (its type unchanged). Allowed under SWMR, where
/// creating an attribute is not: such attributes are created early with a placeholder value.
[[nodiscard]] core::Result<void> rewrite_text(hid_t object, const char* name, std::string_view value);
[[nodiscard]] core::Result<void> rewrite_fixed_text(hid_t object, const char* name, std::string_view value,
                                                    std::uint32_t width);
[[nodiscard]] core::Result<void> rewrite_u64(hid_t object, const char* name, std::uint64_t value);

[[nodiscard]] bool has_attr(hid_t object, const char* name);
/// A text attribute, variable or fixed length, up to its first NUL. Fails with layout_mismatch when
/// it is not text, io_error when HDF5 cannot open or read it.
[[nodiscard]] core::Result<std::string> read_text_attr(hid_t object, const char* name);
/// A numeric scalar attribute, converted by HDF5 to the asked type. Fails with layout_mismatch when
/// it is not one number, io_error when HDF5 cannot open or read it.
[[nodiscard]] core::Result<std::uint64_t> read_u64_attr(hid_t object, const char* name);
[[nodiscard]] core::Result<double> read_f64_attr(hid_t object, const char* name);

/// Nanoseconds since the epoch as ISO 8601 UTC with nanoseconds, "2024-05-01T12:34:56.123456789Z":
/// the text of every time attribute weir writes.
[[nodiscard]] std::string iso8601_ns(std::uint64_t epoch_ns);

}  // namespace weir::h5

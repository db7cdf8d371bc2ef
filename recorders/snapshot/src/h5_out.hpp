#pragma once
// Writing HDF5 for snapshots: attributes, groups, whole arrays, and datasets that grow batch by
// batch. Every failure comes back as an Error naming the HDF5 call, the object and the library's
// own message. Thread: one per process (serial HDF5).
#include <hdf5.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "weir/core/error.hpp"
#include "weir/h5/handle.hpp"

namespace weir::rec::detail {

/// An Error for a failed HDF5 call on `object`, with the library's error stack.
[[nodiscard]] core::Error h5_error(std::string_view call, std::string_view object);

/// A variable-length UTF-8 string type (h5py reads attributes of it as str, table fields as bytes).
[[nodiscard]] h5::Handle text_type();
/// A variable-length sequence of bytes (h5py: a uint8 array per element).
[[nodiscard]] h5::Handle bytes_type();
/// An 8-bit enumeration with the given names for 0, 1, 2, ... (h5py: h5py.check_enum_dtype).
[[nodiscard]] h5::Handle enum_type(std::span<const char* const> names);

[[nodiscard]] core::Result<h5::Handle> create_group(hid_t parent, const std::string& name, const std::string& path);

[[nodiscard]] core::Result<void> attr_text(hid_t object, const char* name, std::string_view value);
[[nodiscard]] core::Result<void> attr_u64(hid_t object, const char* name, std::uint64_t value);
[[nodiscard]] core::Result<void> attr_i64(hid_t object, const char* name, std::int64_t value);
[[nodiscard]] core::Result<void> attr_f64(hid_t object, const char* name, double value);
[[nodiscard]] core::Result<void> attr_u32_array(hid_t object, const char* name, std::span<const std::uint32_t> values);

/// Writes a whole 1-D dataset of `count` elements of mem_type (stored as file_type).
[[nodiscard]] core::Result<void> write_array(hid_t parent, const std::string& name, const std::string& path,
                                             hid_t file_type, hid_t mem_type, const void* data, std::uint64_t count);

template <class T>
[[nodiscard]] core::Result<void> write_numbers(hid_t parent, const std::string& name, const std::string& path,
                                               const std::vector<T>& values);

/// A dataset of rows (1-D, or rows x cols when cols > 0) that grows as batches are appended:
/// chunked, with an unlimited first dimension.
class Appender {
 public:
  [[nodiscard]] static core::Result<Appender> create(hid_t parent, const std::string& name, std::string path,
                                                     hid_t file_type, hid_t mem_type, std::uint64_t cols,
                                                     std::uint64_t chunk_rows);
  /// Appends `count` rows of mem_type from `rows`.
  [[nodiscard]] core::Result<void> append(const void* rows, std::uint64_t count);
  [[nodiscard]] std::uint64_t rows() const noexcept { return rows_; }
  [[nodiscard]] hid_t id() const noexcept { return dataset_.get(); }

 private:
  h5::Handle dataset_;
  h5::Handle mem_type_;
  std::string path_;
  std::uint64_t cols_ = 0;
  std::uint64_t rows_ = 0;
};

}  // namespace weir::rec::detail

#pragma once
// Groups and datasets, created, grown and written with checks; files opened for reading. Errors
// name the HDF5 call and the object (see check.hpp). Thread: one per process (serial HDF5).
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "weir/core/error.hpp"
#include "weir/h5/handle.hpp"

namespace weir::h5 {

/// A group `name` under parent, with an NX_class attribute when nx_class is not empty. `what` names
/// it in errors ("run.h5 /entry/adc0").
[[nodiscard]] core::Result<Group> create_group(hid_t parent, const std::string& name, std::string_view what,
                                               std::string_view nx_class = {});

/// Whether `name` is a link of group that leads to an object.
[[nodiscard]] bool has_link(hid_t group, const std::string& name);

/// Opens a file read-only; one a SWMR writer has (or had) open, as a SWMR reader. `as_swmr_reader`
/// says which. An invalid File when HDF5 cannot open it either way (its error stack says why).
[[nodiscard]] File open_read_only(const std::string& path, bool& as_swmr_reader);

/// Writes a whole 1-D dataset of `count` elements of mem_type (stored as file_type).
[[nodiscard]] core::Result<void> write_array(hid_t parent, const std::string& name, std::string_view what,
                                             hid_t file_type, hid_t mem_type, const void* data, std::uint64_t count);
/// write_array of numbers, stored as their native type.
template <class T>
[[nodiscard]] core::Result<void> write_numbers(hid_t parent, const std::string& name, std::string_view what,
                                               const std::vector<T>& values);

/// Writes rows [first, first + count) of a dataset of rows (1-D, or rows x cols when cols > 0) from
/// `data` (mem_type); the dataset must already extend that far (H5Dset_extent).
[[nodiscard]] core::Result<void> write_rows(hid_t dataset, hid_t mem_type, std::uint64_t first, std::uint64_t count,
                                            std::uint64_t cols, const void* data, std::string_view what);

/// A dataset of rows (1-D, or rows x cols when cols > 0) that grows as batches are appended:
/// chunked, with an unlimited first dimension, each batch written at once.
class Appender {
 public:
  [[nodiscard]] static core::Result<Appender> create(hid_t parent, const std::string& name, std::string what,
                                                     hid_t file_type, hid_t mem_type, std::uint64_t cols,
                                                     std::uint64_t chunk_rows);
  /// Appends `count` rows of mem_type from `rows`.
  [[nodiscard]] core::Result<void> append(const void* rows, std::uint64_t count);
  [[nodiscard]] std::uint64_t rows() const noexcept { return rows_; }
  [[nodiscard]] hid_t id() const noexcept { return dataset_.get(); }

 private:
  Dataset dataset_;
  Type mem_type_;
  std::string what_;
  std::uint64_t cols_ = 0;
  std::uint64_t rows_ = 0;
};

}  // namespace weir::h5

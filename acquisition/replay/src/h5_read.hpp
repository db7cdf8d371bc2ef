#pragma once
// Reading HDF5 for replay: attributes (text of either string kind, numbers), whole 1-D datasets.
// Failures name the file, the object and what is wrong. Thread: one per process (serial HDF5).
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

#include "weir/core/error.hpp"
#include "weir/h5/handle.hpp"

namespace weir::acq::detail {

/// Where an object lives, for messages: "'run.h5' /entry/adc0/data".
struct H5Place {
  const std::string& file;
  std::string path;
  [[nodiscard]] std::string describe() const { return "'" + file + "' " + path; }
};

/// Opens an HDF5 file read-only (as a SWMR reader when a recorder still has it open for writing).
/// Refuses a missing file, one that is not HDF5, and one HDF5 cannot open, naming it.
[[nodiscard]] core::Result<h5::Handle> open_file(const std::string& path);

/// A refusal naming the place: "'run.h5' /entry/adc0: <why>".
[[nodiscard]] core::Error refuse(const H5Place& place, const std::string& why);

[[nodiscard]] bool has_attr(hid_t object, const char* name);
[[nodiscard]] bool has_link(hid_t group, const std::string& name);

/// A string attribute, fixed-length or variable-length, without trailing NULs or spaces.
[[nodiscard]] core::Result<std::string> read_text_attr(hid_t object, const char* name, const H5Place& place);
/// A numeric scalar attribute, converted by HDF5 to the asked type (refused if it is not a number).
[[nodiscard]] core::Result<std::uint64_t> read_u64_attr(hid_t object, const char* name, const H5Place& place);
[[nodiscard]] core::Result<double> read_f64_attr(hid_t object, const char* name, const H5Place& place);

/// Number of elements of a 1-D dataset.
[[nodiscard]] core::Result<std::uint64_t> dataset_length(hid_t dataset, const H5Place& place);

/// Reads a whole 1-D numeric dataset `name` of `group` as T (u64 or u32), refusing a missing one.
template <class T>
[[nodiscard]] core::Result<std::vector<T>> read_numbers(hid_t group, const std::string& name, const H5Place& place);

/// Opens a dataset, refusing a missing one by name.
[[nodiscard]] core::Result<h5::Handle> open_dataset(hid_t group, const std::string& name, const H5Place& place);

}  // namespace weir::acq::detail

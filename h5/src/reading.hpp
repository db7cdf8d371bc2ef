#pragma once
// Reading a recording: attributes and whole 1-D datasets, each failure a refusal that names the
// file, the object and what is wrong. Private to the reader. Thread: one per process (serial HDF5).
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

#include "weir/core/error.hpp"
#include "weir/h5/attribute.hpp"
#include "weir/h5/dataset.hpp"
#include "weir/h5/handle.hpp"

namespace weir::h5::detail {

/// Where an object lives, for messages: "'run.h5' /entry/adc0/data".
struct Place {
  const std::string& file;
  std::string path;
  [[nodiscard]] std::string describe() const { return "'" + file + "' " + path; }
};

/// Opens an HDF5 file read-only (as a SWMR reader when a recorder still has it open for writing).
/// Refuses a missing file, one that is not HDF5, and one HDF5 cannot open, naming it. When given,
/// `as_swmr_reader` says whether it had to be opened as a SWMR reader (the file carries a SWMR
/// writer's marks); the file is not modified either way.
[[nodiscard]] core::Result<File> open_file(const std::string& path, bool* as_swmr_reader = nullptr);

/// A refusal naming the place: "'run.h5' /entry/adc0: <why>".
[[nodiscard]] core::Error refuse(const Place& place, const std::string& why);

/// A string attribute, fixed-length or variable-length, without trailing NULs or spaces.
[[nodiscard]] core::Result<std::string> text_attr(hid_t object, const char* name, const Place& place);
/// A numeric scalar attribute, converted by HDF5 to the asked type (refused if it is not a number).
[[nodiscard]] core::Result<std::uint64_t> u64_attr(hid_t object, const char* name, const Place& place);
[[nodiscard]] core::Result<double> f64_attr(hid_t object, const char* name, const Place& place);

/// Number of elements of a 1-D dataset.
[[nodiscard]] core::Result<std::uint64_t> dataset_length(hid_t dataset, const Place& place);
/// The elements of a channel's data: 1-D, or rows x cols (a frame channel, format 1.2).
[[nodiscard]] core::Result<std::uint64_t> data_elements(hid_t dataset, const Place& place);

/// Reads a whole 1-D numeric dataset `name` of `group` as T (u64 or u32), refusing a missing one.
template <class T>
[[nodiscard]] core::Result<std::vector<T>> read_numbers(hid_t group, const std::string& name, const Place& place);

/// Opens a dataset, refusing a missing one by name.
[[nodiscard]] core::Result<Dataset> open_dataset(hid_t group, const std::string& name, const Place& place);

}  // namespace weir::h5::detail

// HDF5 writing helpers for snapshots: thin checked wrappers over the C calls.
#include "h5_out.hpp"

#include <algorithm>
#include <array>
#include <type_traits>

namespace weir::rec::detail {

namespace {

template <class T>
hid_t native_type() noexcept {
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
    static_assert(std::is_same_v<T, double>, "a type write_numbers knows");
    return H5T_NATIVE_DOUBLE;
  }
}

core::Result<void> write_attr(hid_t object, const char* name, hid_t type, hid_t space, const void* value) {
  h5::Handle attr(H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT));
  if (!attr) return tl::make_unexpected(h5_error("H5Acreate2", name));
  if (H5Awrite(attr.get(), type, value) < 0) return tl::make_unexpected(h5_error("H5Awrite", name));
  if (!attr.reset()) return tl::make_unexpected(h5_error("H5Aclose", name));
  return {};
}

core::Result<void> scalar_attr(hid_t object, const char* name, hid_t type, const void* value) {
  h5::Handle space(H5Screate(H5S_SCALAR));
  if (!space) return tl::make_unexpected(h5_error("H5Screate", name));
  return write_attr(object, name, type, space.get(), value);
}

}  // namespace

core::Error h5_error(std::string_view call, std::string_view object) {
  std::string what = std::string(call) + " " + std::string(object);
  if (std::string stack = h5::last_error(); !stack.empty()) what += ": " + stack;
  return core::Error{core::Errc::io_error, std::move(what)};
}

h5::Handle text_type() {
  h5::Handle t(H5Tcopy(H5T_C_S1));
  H5Tset_size(t.get(), H5T_VARIABLE);
  H5Tset_cset(t.get(), H5T_CSET_UTF8);
  return t;
}

h5::Handle bytes_type() { return h5::Handle(H5Tvlen_create(H5T_NATIVE_UINT8)); }

h5::Handle enum_type(std::span<const char* const> names) {
  h5::Handle t(H5Tenum_create(H5T_NATIVE_UINT8));
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto value = static_cast<std::uint8_t>(i);
    H5Tenum_insert(t.get(), names[i], &value);
  }
  return t;
}

core::Result<h5::Handle> create_group(hid_t parent, const std::string& name, const std::string& path) {
  h5::Handle group(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (!group) return tl::make_unexpected(h5_error("H5Gcreate2", path));
  return group;
}

core::Result<void> attr_text(hid_t object, const char* name, std::string_view value) {
  const h5::Handle type = text_type();
  const std::string copy(value);  // a zero-terminated copy: variable-length strings are C strings
  const char* text = copy.c_str();
  return scalar_attr(object, name, type.get(), &text);
}

core::Result<void> attr_u64(hid_t object, const char* name, std::uint64_t value) {
  return scalar_attr(object, name, H5T_NATIVE_UINT64, &value);
}

core::Result<void> attr_i64(hid_t object, const char* name, std::int64_t value) {
  return scalar_attr(object, name, H5T_NATIVE_INT64, &value);
}

core::Result<void> attr_f64(hid_t object, const char* name, double value) {
  return scalar_attr(object, name, H5T_NATIVE_DOUBLE, &value);
}

core::Result<void> attr_u32_array(hid_t object, const char* name, std::span<const std::uint32_t> values) {
  const hsize_t dims[1] = {values.size()};
  h5::Handle space(H5Screate_simple(1, dims, nullptr));
  if (!space) return tl::make_unexpected(h5_error("H5Screate_simple", name));
  const std::uint32_t none = 0;
  return write_attr(object, name, H5T_NATIVE_UINT32, space.get(), values.empty() ? &none : values.data());
}

core::Result<void> write_array(hid_t parent, const std::string& name, const std::string& path, hid_t file_type,
                               hid_t mem_type, const void* data, std::uint64_t count) {
  const hsize_t dims[1] = {count};
  h5::Handle space(H5Screate_simple(1, dims, nullptr));
  if (!space) return tl::make_unexpected(h5_error("H5Screate_simple", path));
  h5::Handle dataset(H5Dcreate2(parent, name.c_str(), file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (!dataset) return tl::make_unexpected(h5_error("H5Dcreate2", path));
  if (count > 0 && H5Dwrite(dataset.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    return tl::make_unexpected(h5_error("H5Dwrite", path));
  if (!dataset.reset()) return tl::make_unexpected(h5_error("H5Dclose", path));
  return {};
}

template <class T>
core::Result<void> write_numbers(hid_t parent, const std::string& name, const std::string& path,
                                 const std::vector<T>& values) {
  return write_array(parent, name, path, native_type<T>(), native_type<T>(), values.data(), values.size());
}

template core::Result<void> write_numbers(hid_t, const std::string&, const std::string&,
                                          const std::vector<std::uint64_t>&);
template core::Result<void> write_numbers(hid_t, const std::string&, const std::string&,
                                          const std::vector<std::int64_t>&);
template core::Result<void> write_numbers(hid_t, const std::string&, const std::string&,
                                          const std::vector<std::uint32_t>&);
template core::Result<void> write_numbers(hid_t, const std::string&, const std::string&,
                                          const std::vector<std::uint8_t>&);
template core::Result<void> write_numbers(hid_t, const std::string&, const std::string&, const std::vector<float>&);
template core::Result<void> write_numbers(hid_t, const std::string&, const std::string&, const std::vector<double>&);

core::Result<Appender> Appender::create(hid_t parent, const std::string& name, std::string path, hid_t file_type,
                                        hid_t mem_type, std::uint64_t cols, std::uint64_t chunk_rows) {
  const int rank = cols > 0 ? 2 : 1;
  const hsize_t dims[2] = {0, cols};
  const hsize_t max_dims[2] = {H5S_UNLIMITED, cols};
  const hsize_t chunk[2] = {std::max<std::uint64_t>(chunk_rows, 1), std::max<std::uint64_t>(cols, 1)};
  h5::Handle space(H5Screate_simple(rank, dims, max_dims));
  if (!space) return tl::make_unexpected(h5_error("H5Screate_simple", path));
  h5::Handle plist(H5Pcreate(H5P_DATASET_CREATE));
  if (!plist || H5Pset_chunk(plist.get(), rank, chunk) < 0) return tl::make_unexpected(h5_error("H5Pset_chunk", path));
  Appender out;
  out.dataset_ =
      h5::Handle(H5Dcreate2(parent, name.c_str(), file_type, space.get(), H5P_DEFAULT, plist.get(), H5P_DEFAULT));
  if (!out.dataset_) return tl::make_unexpected(h5_error("H5Dcreate2", path));
  out.mem_type_ = h5::Handle(H5Tcopy(mem_type));
  if (!out.mem_type_) return tl::make_unexpected(h5_error("H5Tcopy", path));
  out.path_ = std::move(path);
  out.cols_ = cols;
  return out;
}

core::Result<void> Appender::append(const void* rows, std::uint64_t count) {
  if (count == 0) return {};
  const int rank = cols_ > 0 ? 2 : 1;
  const hsize_t size[2] = {rows_ + count, cols_};
  if (H5Dset_extent(dataset_.get(), size) < 0) return tl::make_unexpected(h5_error("H5Dset_extent", path_));
  h5::Handle file_space(H5Dget_space(dataset_.get()));
  const hsize_t start[2] = {rows_, 0};
  const hsize_t counts[2] = {count, cols_};
  if (!file_space || H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, counts, nullptr) < 0)
    return tl::make_unexpected(h5_error("H5Sselect_hyperslab", path_));
  h5::Handle mem_space(H5Screate_simple(rank, counts, nullptr));
  if (!mem_space) return tl::make_unexpected(h5_error("H5Screate_simple", path_));
  if (H5Dwrite(dataset_.get(), mem_type_.get(), mem_space.get(), file_space.get(), H5P_DEFAULT, rows) < 0)
    return tl::make_unexpected(h5_error("H5Dwrite", path_));
  rows_ += count;
  return {};
}

}  // namespace weir::rec::detail

#include "weir/h5/dataset.hpp"

#include <algorithm>

#include "weir/h5/attribute.hpp"
#include "weir/h5/check.hpp"
#include "weir/h5/types.hpp"

namespace weir::h5 {

core::Result<Group> create_group(hid_t parent, const std::string& name, std::string_view what,
                                 std::string_view nx_class) {
  auto group =
      check<Group>(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "H5Gcreate2", what);
  if (!group) return group;
  if (!nx_class.empty())
    if (auto ok = attr_text(group->get(), "NX_class", nx_class); !ok) return tl::make_unexpected(ok.error());
  return group;
}

bool has_link(hid_t group, const std::string& name) {
  return H5Lexists(group, name.c_str(), H5P_DEFAULT) > 0 && H5Oexists_by_name(group, name.c_str(), H5P_DEFAULT) > 0;
}

File open_read_only(const std::string& path, bool& as_swmr_reader) {
  as_swmr_reader = false;
  File file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (file) return file;
  as_swmr_reader = true;  // a live or killed SWMR writer's marks: only a SWMR reader may open it
  return File(H5Fopen(path.c_str(), H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, H5P_DEFAULT));
}

core::Result<void> write_array(hid_t parent, const std::string& name, std::string_view what, hid_t file_type,
                               hid_t mem_type, const void* data, std::uint64_t count) {
  const hsize_t dims[1] = {count};
  auto space = check<Space>(H5Screate_simple(1, dims, nullptr), "H5Screate_simple", what);
  if (!space) return tl::make_unexpected(space.error());
  auto dataset = check<Dataset>(
      H5Dcreate2(parent, name.c_str(), file_type, space->get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "H5Dcreate2",
      what);
  if (!dataset) return tl::make_unexpected(dataset.error());
  if (count > 0)
    if (auto ok = check(H5Dwrite(dataset->get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), "H5Dwrite", what); !ok)
      return ok;
  if (!dataset->reset()) return tl::make_unexpected(error("H5Dclose", what));
  return {};
}

template <class T>
core::Result<void> write_numbers(hid_t parent, const std::string& name, std::string_view what,
                                 const std::vector<T>& values) {
  return write_array(parent, name, what, native_type<T>(), native_type<T>(), values.data(), values.size());
}

template core::Result<void> write_numbers(hid_t, const std::string&, std::string_view,
                                          const std::vector<std::uint64_t>&);
template core::Result<void> write_numbers(hid_t, const std::string&, std::string_view,
                                          const std::vector<std::int64_t>&);
template core::Result<void> write_numbers(hid_t, const std::string&, std::string_view,
                                          const std::vector<std::uint32_t>&);
template core::Result<void> write_numbers(hid_t, const std::string&, std::string_view,
                                          const std::vector<std::uint8_t>&);
template core::Result<void> write_numbers(hid_t, const std::string&, std::string_view, const std::vector<float>&);
template core::Result<void> write_numbers(hid_t, const std::string&, std::string_view, const std::vector<double>&);

core::Result<void> write_rows(hid_t dataset, hid_t mem_type, std::uint64_t first, std::uint64_t count,
                              std::uint64_t cols, const void* data, std::string_view what) {
  const int rank = cols > 0 ? 2 : 1;
  auto file_space = check<Space>(H5Dget_space(dataset), "H5Dget_space", what);
  if (!file_space) return tl::make_unexpected(file_space.error());
  const hsize_t start[2] = {first, 0};
  const hsize_t counts[2] = {count, cols};
  if (auto ok = check(H5Sselect_hyperslab(file_space->get(), H5S_SELECT_SET, start, nullptr, counts, nullptr),
                      "H5Sselect_hyperslab", what);
      !ok)
    return ok;
  auto mem_space = check<Space>(H5Screate_simple(rank, counts, nullptr), "H5Screate_simple", what);
  if (!mem_space) return tl::make_unexpected(mem_space.error());
  return check(H5Dwrite(dataset, mem_type, mem_space->get(), file_space->get(), H5P_DEFAULT, data), "H5Dwrite", what);
}

core::Result<Appender> Appender::create(hid_t parent, const std::string& name, std::string what, hid_t file_type,
                                        hid_t mem_type, std::uint64_t cols, std::uint64_t chunk_rows) {
  const int rank = cols > 0 ? 2 : 1;
  const hsize_t dims[2] = {0, cols};
  const hsize_t max_dims[2] = {H5S_UNLIMITED, cols};
  const hsize_t chunk[2] = {std::max<std::uint64_t>(chunk_rows, 1), std::max<std::uint64_t>(cols, 1)};
  auto space = check<Space>(H5Screate_simple(rank, dims, max_dims), "H5Screate_simple", what);
  if (!space) return tl::make_unexpected(space.error());
  PropList plist(H5Pcreate(H5P_DATASET_CREATE));
  if (!plist || H5Pset_chunk(plist.get(), rank, chunk) < 0) return tl::make_unexpected(error("H5Pset_chunk", what));
  auto dataset = check<Dataset>(
      H5Dcreate2(parent, name.c_str(), file_type, space->get(), H5P_DEFAULT, plist.get(), H5P_DEFAULT), "H5Dcreate2",
      what);
  if (!dataset) return tl::make_unexpected(dataset.error());
  Appender out;
  out.dataset_ = std::move(*dataset);
  out.mem_type_ = Type(H5Tcopy(mem_type));
  if (!out.mem_type_) return tl::make_unexpected(error("H5Tcopy", what));
  out.what_ = std::move(what);
  out.cols_ = cols;
  return out;
}

core::Result<void> Appender::append(const void* rows, std::uint64_t count) {
  if (count == 0) return {};
  const hsize_t size[2] = {rows_ + count, cols_};
  if (auto ok = check(H5Dset_extent(dataset_.get(), size), "H5Dset_extent", what_); !ok) return ok;
  if (auto ok = write_rows(dataset_.get(), mem_type_.get(), rows_, count, cols_, rows, what_); !ok) return ok;
  rows_ += count;
  return {};
}

}  // namespace weir::h5

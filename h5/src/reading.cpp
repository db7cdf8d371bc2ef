// Reading a recording: thin checked reads that refuse, naming the place.
#include "reading.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "weir/h5/types.hpp"

namespace weir::h5::detail {

namespace {

std::string library_says() {
  const std::string text = last_error();
  return text.empty() ? "" : " (" + text + ")";
}

// An attribute's read failure as a refusal: not of the asked kind, or HDF5 could not read it.
core::Error refuse_attr(const Place& place, const char* name, const core::Error& e) {
  if (e.code == core::Errc::layout_mismatch) return refuse(place, e.what);
  return refuse(place, std::string("cannot read attribute ") + name + " (" + e.what + ")");
}

template <class T>
core::Result<T> number_attr(hid_t object, const char* name, const Place& place,
                            core::Result<T> (*read)(hid_t, const char*)) {
  if (!has_attr(object, name)) return tl::make_unexpected(refuse(place, std::string("lacks the attribute ") + name));
  auto v = read(object, name);
  if (!v) return tl::make_unexpected(refuse_attr(place, name, v.error()));
  return v;
}

}  // namespace

core::Result<File> open_file(const std::string& path, bool* as_swmr_reader) {
  const auto fail = [&path](const std::string& why) {
    return core::fail(core::Errc::invalid_argument, "'" + path + "': " + why);
  };
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return core::fail(core::Errc::not_found, "'" + path + "': " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return fail("not a regular file");
  const htri_t hdf5 = H5Fis_hdf5(path.c_str());
  if (hdf5 < 0) return fail("cannot be read" + library_says());
  if (hdf5 == 0) return fail("not an HDF5 file");
  bool marked = false;
  File file = open_read_only(path, marked);
  if (!file) return fail("HDF5 cannot open it" + library_says());
  if (as_swmr_reader != nullptr) *as_swmr_reader = marked;
  return file;
}

core::Error refuse(const Place& place, const std::string& why) {
  return core::Error{core::Errc::invalid_argument, place.describe() + ": " + why};
}

core::Result<std::string> text_attr(hid_t object, const char* name, const Place& place) {
  if (!has_attr(object, name)) return tl::make_unexpected(refuse(place, std::string("lacks the attribute ") + name));
  auto text = read_text_attr(object, name);
  if (!text) return tl::make_unexpected(refuse_attr(place, name, text.error()));
  while (!text->empty() && text->back() == ' ') text->pop_back();  // fixed-size space padding
  return text;
}

core::Result<std::uint64_t> u64_attr(hid_t object, const char* name, const Place& place) {
  return number_attr<std::uint64_t>(object, name, place, &read_u64_attr);
}

core::Result<double> f64_attr(hid_t object, const char* name, const Place& place) {
  return number_attr<double>(object, name, place, &read_f64_attr);
}

core::Result<std::uint64_t> dataset_length(hid_t dataset, const Place& place) {
  Space space(H5Dget_space(dataset));
  if (!space || H5Sget_simple_extent_ndims(space.get()) != 1)
    return tl::make_unexpected(refuse(place, "is not a one-dimensional dataset"));
  hsize_t dims[1] = {0};
  H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  return std::uint64_t{dims[0]};
}

core::Result<std::uint64_t> data_elements(hid_t dataset, const Place& place) {
  Space space(H5Dget_space(dataset));
  const int rank = space ? H5Sget_simple_extent_ndims(space.get()) : -1;
  if (rank != 1 && rank != 2) return tl::make_unexpected(refuse(place, "is not a one- or two-dimensional dataset"));
  hsize_t dims[2] = {0, 1};
  H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  return std::uint64_t{dims[0]} * dims[1];
}

core::Result<Dataset> open_dataset(hid_t group, const std::string& name, const Place& place) {
  if (!has_link(group, name)) return tl::make_unexpected(refuse(place, "lacks the dataset " + name));
  Dataset dataset(H5Dopen2(group, name.c_str(), H5P_DEFAULT));
  if (!dataset) return tl::make_unexpected(refuse(place, "cannot open the dataset " + name + library_says()));
  return dataset;
}

template <class T>
core::Result<std::vector<T>> read_numbers(hid_t group, const std::string& name, const Place& place) {
  auto dataset = open_dataset(group, name, place);
  if (!dataset) return tl::make_unexpected(dataset.error());
  const Place here{place.file, place.path + "/" + name};
  auto n = dataset_length(dataset->get(), here);
  if (!n) return tl::make_unexpected(n.error());
  Type type(H5Dget_type(dataset->get()));
  if (!type || H5Tget_class(type.get()) != H5T_INTEGER)
    return tl::make_unexpected(refuse(here, "does not hold integers"));
  std::vector<T> out(*n);
  if (*n > 0 && H5Dread(dataset->get(), native_type<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0)
    return tl::make_unexpected(refuse(here, "cannot be read" + library_says()));
  return out;
}

template core::Result<std::vector<std::uint64_t>> read_numbers(hid_t, const std::string&, const Place&);
template core::Result<std::vector<std::uint32_t>> read_numbers(hid_t, const std::string&, const Place&);

}  // namespace weir::h5::detail

// HDF5 reading helpers for replay: thin checked wrappers over the C calls.
#include "h5_read.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <type_traits>

namespace weir::acq::detail {

namespace {

template <class T>
hid_t native_type() noexcept {
  if constexpr (std::is_same_v<T, std::uint64_t>) {
    return H5T_NATIVE_UINT64;
  } else {
    static_assert(std::is_same_v<T, std::uint32_t>, "a type read_numbers knows");
    return H5T_NATIVE_UINT32;
  }
}

std::string library_says() {
  const std::string text = h5::last_error();
  return text.empty() ? "" : " (" + text + ")";
}

// A numeric scalar attribute read as mem_type.
core::Result<void> read_number(hid_t object, const char* name, hid_t mem_type, void* out, const H5Place& place) {
  if (!has_attr(object, name)) return tl::make_unexpected(refuse(place, std::string("lacks the attribute ") + name));
  h5::Handle attr(H5Aopen(object, name, H5P_DEFAULT));
  h5::Handle type(attr ? H5Aget_type(attr.get()) : H5I_INVALID_HID);
  h5::Handle space(attr ? H5Aget_space(attr.get()) : H5I_INVALID_HID);
  if (!type || !space)
    return tl::make_unexpected(refuse(place, std::string("cannot open attribute ") + name + library_says()));
  const H5T_class_t cls = H5Tget_class(type.get());
  if ((cls != H5T_INTEGER && cls != H5T_FLOAT) || H5Sget_simple_extent_npoints(space.get()) != 1)
    return tl::make_unexpected(refuse(place, std::string("attribute ") + name + " is not a number"));
  if (H5Aread(attr.get(), mem_type, out) < 0)
    return tl::make_unexpected(refuse(place, std::string("cannot read attribute ") + name + library_says()));
  return {};
}

}  // namespace

core::Result<h5::Handle> open_file(const std::string& path) {
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
  h5::Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!file) file = h5::Handle(H5Fopen(path.c_str(), H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, H5P_DEFAULT));
  if (!file) return fail("HDF5 cannot open it" + library_says());
  return file;
}

core::Error refuse(const H5Place& place, const std::string& why) {
  return core::Error{core::Errc::invalid_argument, place.describe() + ": " + why};
}

bool has_attr(hid_t object, const char* name) { return H5Aexists(object, name) > 0; }

bool has_link(hid_t group, const std::string& name) {
  return H5Lexists(group, name.c_str(), H5P_DEFAULT) > 0 && H5Oexists_by_name(group, name.c_str(), H5P_DEFAULT) > 0;
}

core::Result<std::string> read_text_attr(hid_t object, const char* name, const H5Place& place) {
  if (!has_attr(object, name)) return tl::make_unexpected(refuse(place, std::string("lacks the attribute ") + name));
  h5::Handle attr(H5Aopen(object, name, H5P_DEFAULT));
  h5::Handle type(attr ? H5Aget_type(attr.get()) : H5I_INVALID_HID);
  if (!type || H5Tget_class(type.get()) != H5T_STRING)
    return tl::make_unexpected(refuse(place, std::string("attribute ") + name + " is not text"));
  std::string text;
  if (H5Tis_variable_str(type.get()) > 0) {
    h5::Handle mem(H5Tcopy(H5T_C_S1));
    H5Tset_size(mem.get(), H5T_VARIABLE);
    H5Tset_cset(mem.get(), H5Tget_cset(type.get()));
    char* value = nullptr;
    if (H5Aread(attr.get(), mem.get(), &value) < 0)
      return tl::make_unexpected(refuse(place, std::string("cannot read attribute ") + name + library_says()));
    if (value != nullptr) text = value;
    H5free_memory(value);
  } else {
    const std::size_t size = H5Tget_size(type.get());
    text.assign(size, '\0');
    if (size > 0 && H5Aread(attr.get(), type.get(), text.data()) < 0)
      return tl::make_unexpected(refuse(place, std::string("cannot read attribute ") + name + library_says()));
  }
  while (!text.empty() && (text.back() == '\0' || text.back() == ' ')) text.pop_back();  // fixed-size padding
  if (const auto nul = text.find('\0'); nul != std::string::npos) text.resize(nul);
  return text;
}

core::Result<std::uint64_t> read_u64_attr(hid_t object, const char* name, const H5Place& place) {
  std::uint64_t v = 0;
  if (auto ok = read_number(object, name, H5T_NATIVE_UINT64, &v, place); !ok) return tl::make_unexpected(ok.error());
  return v;
}

core::Result<double> read_f64_attr(hid_t object, const char* name, const H5Place& place) {
  double v = 0;
  if (auto ok = read_number(object, name, H5T_NATIVE_DOUBLE, &v, place); !ok) return tl::make_unexpected(ok.error());
  return v;
}

core::Result<std::uint64_t> dataset_length(hid_t dataset, const H5Place& place) {
  h5::Handle space(H5Dget_space(dataset));
  if (!space || H5Sget_simple_extent_ndims(space.get()) != 1)
    return tl::make_unexpected(refuse(place, "is not a one-dimensional dataset"));
  hsize_t dims[1] = {0};
  H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  return std::uint64_t{dims[0]};
}

core::Result<h5::Handle> open_dataset(hid_t group, const std::string& name, const H5Place& place) {
  if (!has_link(group, name)) return tl::make_unexpected(refuse(place, "lacks the dataset " + name));
  h5::Handle dataset(H5Dopen2(group, name.c_str(), H5P_DEFAULT));
  if (!dataset) return tl::make_unexpected(refuse(place, "cannot open the dataset " + name + library_says()));
  return dataset;
}

template <class T>
core::Result<std::vector<T>> read_numbers(hid_t group, const std::string& name, const H5Place& place) {
  auto dataset = open_dataset(group, name, place);
  if (!dataset) return tl::make_unexpected(dataset.error());
  const H5Place here{place.file, place.path + "/" + name};
  auto n = dataset_length(dataset->get(), here);
  if (!n) return tl::make_unexpected(n.error());
  h5::Handle type(H5Dget_type(dataset->get()));
  if (!type || H5Tget_class(type.get()) != H5T_INTEGER)
    return tl::make_unexpected(refuse(here, "does not hold integers"));
  std::vector<T> out(*n);
  if (*n > 0 && H5Dread(dataset->get(), native_type<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0)
    return tl::make_unexpected(refuse(here, "cannot be read" + library_says()));
  return out;
}

template core::Result<std::vector<std::uint64_t>> read_numbers(hid_t, const std::string&, const H5Place&);
template core::Result<std::vector<std::uint32_t>> read_numbers(hid_t, const std::string&, const H5Place&);

}  // namespace weir::acq::detail

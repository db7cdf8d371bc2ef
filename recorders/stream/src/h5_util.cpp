// Checked HDF5 calls for the recorder: attributes, groups, sample types.
#include "h5_util.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace weir::rec {

core::Error h5_error(std::string_view call, std::string_view what) {
  std::string reason = h5::last_error();
  std::string text = std::string(call) + " " + std::string(what);
  if (!reason.empty()) text += ": " + reason;
  return core::Error{core::Errc::io_error, std::move(text)};
}

core::Result<h5::Handle> h5_check(hid_t id, std::string_view call, std::string_view what) {
  if (id < 0) return tl::make_unexpected(h5_error(call, what));
  return h5::Handle{id};
}

core::Result<void> h5_check(herr_t rc, std::string_view call, std::string_view what) {
  if (rc < 0) return tl::make_unexpected(h5_error(call, what));
  return {};
}

core::Result<h5::Handle> create_group(hid_t parent, const std::string& name, std::string_view nx_class,
                                      std::string_view what) {
  auto group = h5_check(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "H5Gcreate2", what);
  if (!group) return group;
  if (!nx_class.empty())
    if (auto ok = attr_text(group->get(), "NX_class", nx_class); !ok) return tl::make_unexpected(ok.error());
  return group;
}

namespace {

core::Result<void> write_attr(hid_t obj, const char* name, hid_t type, const void* value) {
  auto space = h5_check(H5Screate(H5S_SCALAR), "H5Screate", name);
  if (!space) return tl::make_unexpected(space.error());
  auto attr = h5_check(H5Acreate2(obj, name, type, space->get(), H5P_DEFAULT, H5P_DEFAULT), "H5Acreate2", name);
  if (!attr) return tl::make_unexpected(attr.error());
  return h5_check(H5Awrite(attr->get(), type, value), "H5Awrite", name);
}

core::Result<void> overwrite_attr(hid_t obj, const char* name, hid_t type, const void* value) {
  auto attr = h5_check(H5Aopen(obj, name, H5P_DEFAULT), "H5Aopen", name);
  if (!attr) return tl::make_unexpected(attr.error());
  return h5_check(H5Awrite(attr->get(), type, value), "H5Awrite", name);
}

h5::Handle fixed_text_type(std::uint32_t width) {
  h5::Handle type{H5Tcopy(H5T_C_S1)};
  H5Tset_size(type.get(), width);
  H5Tset_strpad(type.get(), H5T_STR_NULLPAD);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  return type;
}

std::vector<char> fixed_bytes(std::string_view value, std::uint32_t width) {
  std::vector<char> bytes(width, '\0');
  std::memcpy(bytes.data(), value.data(), std::min<std::size_t>(value.size(), width));
  return bytes;
}

}  // namespace

core::Result<void> attr_text(hid_t obj, const char* name, std::string_view value) {
  h5::Handle type{H5Tcopy(H5T_C_S1)};
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  const std::string copy(value);  // NUL-terminated for HDF5
  const char* text = copy.c_str();
  return write_attr(obj, name, type.get(), &text);
}

core::Result<void> attr_fixed_text(hid_t obj, const char* name, std::string_view value, std::uint32_t width) {
  const h5::Handle type = fixed_text_type(width);
  return write_attr(obj, name, type.get(), fixed_bytes(value, width).data());
}

core::Result<void> rewrite_fixed_text(hid_t obj, const char* name, std::string_view value, std::uint32_t width) {
  const h5::Handle type = fixed_text_type(width);
  return overwrite_attr(obj, name, type.get(), fixed_bytes(value, width).data());
}

core::Result<void> attr_u64(hid_t obj, const char* name, std::uint64_t value) {
  return write_attr(obj, name, H5T_NATIVE_UINT64, &value);
}

core::Result<void> rewrite_u64(hid_t obj, const char* name, std::uint64_t value) {
  return overwrite_attr(obj, name, H5T_NATIVE_UINT64, &value);
}

core::Result<void> attr_u32(hid_t obj, const char* name, std::uint32_t value) {
  return write_attr(obj, name, H5T_NATIVE_UINT32, &value);
}

core::Result<void> attr_f64(hid_t obj, const char* name, double value) {
  return write_attr(obj, name, H5T_NATIVE_DOUBLE, &value);
}

core::Result<std::string> read_text_attr(hid_t obj, const char* name) {
  auto attr = h5_check(H5Aopen(obj, name, H5P_DEFAULT), "H5Aopen", name);
  if (!attr) return tl::make_unexpected(attr.error());
  auto type = h5_check(H5Aget_type(attr->get()), "H5Aget_type", name);
  if (!type) return tl::make_unexpected(type.error());
  if (H5Tget_class(type->get()) != H5T_STRING)
    return core::fail(core::Errc::layout_mismatch, std::string("attribute ") + name + " is not text");
  std::string text;
  if (H5Tis_variable_str(type->get()) > 0) {
    h5::Handle mem{H5Tcopy(H5T_C_S1)};
    H5Tset_size(mem.get(), H5T_VARIABLE);
    H5Tset_cset(mem.get(), H5Tget_cset(type->get()));  // HDF5 converts no string between character sets
    char* value = nullptr;
    if (auto ok = h5_check(H5Aread(attr->get(), mem.get(), &value), "H5Aread", name); !ok)
      return tl::make_unexpected(ok.error());
    if (value != nullptr) text = value;
    H5free_memory(value);
    return text;
  }
  text.assign(H5Tget_size(type->get()), '\0');
  if (auto ok = h5_check(H5Aread(attr->get(), type->get(), text.data()), "H5Aread", name); !ok)
    return tl::make_unexpected(ok.error());
  text.resize(std::strlen(text.c_str()));
  return text;
}

core::Result<std::uint64_t> read_u64_attr(hid_t obj, const char* name) {
  auto attr = h5_check(H5Aopen(obj, name, H5P_DEFAULT), "H5Aopen", name);
  if (!attr) return tl::make_unexpected(attr.error());
  std::uint64_t value = 0;
  if (auto ok = h5_check(H5Aread(attr->get(), H5T_NATIVE_UINT64, &value), "H5Aread", name); !ok)
    return tl::make_unexpected(ok.error());
  return value;
}

std::string encode_name(std::string_view name) {
  if (name == ".") return "%2E";
  std::string out;
  out.reserve(name.size());
  for (const char c : name) {
    if (c == '%')
      out += "%25";
    else if (c == '/')
      out += "%2F";
    else
      out += c;
  }
  return out;
}

}  // namespace weir::rec

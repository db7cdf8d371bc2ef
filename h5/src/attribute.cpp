#include "weir/h5/attribute.hpp"

#include <time.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <vector>

#include "weir/h5/check.hpp"
#include "weir/h5/types.hpp"

namespace weir::h5 {

namespace {

constexpr std::uint64_t kNsPerSecond = 1'000'000'000;

core::Result<void> write_attr(hid_t object, const char* name, hid_t type, hid_t space, const void* value) {
  auto attr = check<Attribute>(H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT), "H5Acreate2", name);
  if (!attr) return tl::make_unexpected(attr.error());
  if (auto ok = check(H5Awrite(attr->get(), type, value), "H5Awrite", name); !ok) return ok;
  if (!attr->reset()) return tl::make_unexpected(error("H5Aclose", name));
  return {};
}

core::Result<void> scalar_attr(hid_t object, const char* name, hid_t type, const void* value) {
  auto space = check<Space>(H5Screate(H5S_SCALAR), "H5Screate", name);
  if (!space) return tl::make_unexpected(space.error());
  return write_attr(object, name, type, space->get(), value);
}

core::Result<void> overwrite_attr(hid_t object, const char* name, hid_t type, const void* value) {
  auto attr = check<Attribute>(H5Aopen(object, name, H5P_DEFAULT), "H5Aopen", name);
  if (!attr) return tl::make_unexpected(attr.error());
  return check(H5Awrite(attr->get(), type, value), "H5Awrite", name);
}

std::vector<char> fixed_bytes(std::string_view value, std::uint32_t width) {
  std::vector<char> bytes(width, '\0');
  std::memcpy(bytes.data(), value.data(), std::min<std::size_t>(value.size(), width));
  return bytes;
}

// A numeric scalar attribute read as mem_type.
core::Result<void> read_number(hid_t object, const char* name, hid_t mem_type, void* out) {
  auto attr = check<Attribute>(H5Aopen(object, name, H5P_DEFAULT), "H5Aopen", name);
  if (!attr) return tl::make_unexpected(attr.error());
  auto type = check<Type>(H5Aget_type(attr->get()), "H5Aget_type", name);
  if (!type) return tl::make_unexpected(type.error());
  auto space = check<Space>(H5Aget_space(attr->get()), "H5Aget_space", name);
  if (!space) return tl::make_unexpected(space.error());
  const H5T_class_t cls = H5Tget_class(type->get());
  if ((cls != H5T_INTEGER && cls != H5T_FLOAT) || H5Sget_simple_extent_npoints(space->get()) != 1)
    return core::fail(core::Errc::layout_mismatch, std::string("attribute ") + name + " is not a number");
  return check(H5Aread(attr->get(), mem_type, out), "H5Aread", name);
}

}  // namespace

core::Result<void> attr_text(hid_t object, const char* name, std::string_view value) {
  const Type type = text_type();
  const std::string copy(value);  // NUL-terminated: variable-length strings are C strings
  const char* text = copy.c_str();
  return scalar_attr(object, name, type.get(), &text);
}

core::Result<void> attr_fixed_text(hid_t object, const char* name, std::string_view value, std::uint32_t width) {
  const Type type = fixed_text_type(width);
  return scalar_attr(object, name, type.get(), fixed_bytes(value, width).data());
}

core::Result<void> attr_u64(hid_t object, const char* name, std::uint64_t value) {
  return scalar_attr(object, name, H5T_NATIVE_UINT64, &value);
}

core::Result<void> attr_u32(hid_t object, const char* name, std::uint32_t value) {
  return scalar_attr(object, name, H5T_NATIVE_UINT32, &value);
}

core::Result<void> attr_i64(hid_t object, const char* name, std::int64_t value) {
  return scalar_attr(object, name, H5T_NATIVE_INT64, &value);
}

core::Result<void> attr_f64(hid_t object, const char* name, double value) {
  return scalar_attr(object, name, H5T_NATIVE_DOUBLE, &value);
}

core::Result<void> attr_u32_array(hid_t object, const char* name, std::span<const std::uint32_t> values) {
  const hsize_t dims[1] = {values.size()};
  auto space = check<Space>(H5Screate_simple(1, dims, nullptr), "H5Screate_simple", name);
  if (!space) return tl::make_unexpected(space.error());
  const std::uint32_t none = 0;
  return write_attr(object, name, H5T_NATIVE_UINT32, space->get(), values.empty() ? &none : values.data());
}

core::Result<void> attr_text_list(hid_t object, const char* name, std::span<const std::string> values) {
  const hsize_t dims[1] = {values.size()};
  auto space = check<Space>(H5Screate_simple(1, dims, nullptr), "H5Screate_simple", name);
  if (!space) return tl::make_unexpected(space.error());
  const Type type = text_type();
  std::vector<const char*> texts;
  texts.reserve(values.size());
  for (const std::string& v : values) texts.push_back(v.c_str());
  const char* none = "";
  return write_attr(object, name, type.get(), space->get(), texts.empty() ? &none : texts.data());
}

core::Result<void> rewrite_text(hid_t object, const char* name, std::string_view value) {
  const Type type = text_type();
  const std::string copy(value);
  const char* text = copy.c_str();
  return overwrite_attr(object, name, type.get(), &text);
}

core::Result<void> rewrite_fixed_text(hid_t object, const char* name, std::string_view value, std::uint32_t width) {
  const Type type = fixed_text_type(width);
  return overwrite_attr(object, name, type.get(), fixed_bytes(value, width).data());
}

core::Result<void> rewrite_u64(hid_t object, const char* name, std::uint64_t value) {
  return overwrite_attr(object, name, H5T_NATIVE_UINT64, &value);
}

bool has_attr(hid_t object, const char* name) { return H5Aexists(object, name) > 0; }

core::Result<std::string> read_text_attr(hid_t object, const char* name) {
  auto attr = check<Attribute>(H5Aopen(object, name, H5P_DEFAULT), "H5Aopen", name);
  if (!attr) return tl::make_unexpected(attr.error());
  auto type = check<Type>(H5Aget_type(attr->get()), "H5Aget_type", name);
  if (!type) return tl::make_unexpected(type.error());
  if (H5Tget_class(type->get()) != H5T_STRING)
    return core::fail(core::Errc::layout_mismatch, std::string("attribute ") + name + " is not text");
  std::string text;
  if (H5Tis_variable_str(type->get()) > 0) {
    Type mem(H5Tcopy(H5T_C_S1));
    H5Tset_size(mem.get(), H5T_VARIABLE);
    H5Tset_cset(mem.get(), H5Tget_cset(type->get()));  // HDF5 converts no string between character sets
    char* value = nullptr;
    if (auto ok = check(H5Aread(attr->get(), mem.get(), &value), "H5Aread", name); !ok)
      return tl::make_unexpected(ok.error());
    if (value != nullptr) text = value;
    H5free_memory(value);
    return text;
  }
  text.assign(H5Tget_size(type->get()), '\0');
  if (!text.empty())
    if (auto ok = check(H5Aread(attr->get(), type->get(), text.data()), "H5Aread", name); !ok)
      return tl::make_unexpected(ok.error());
  text.resize(std::strlen(text.c_str()));
  return text;
}

core::Result<std::uint64_t> read_u64_attr(hid_t object, const char* name) {
  std::uint64_t v = 0;
  if (auto ok = read_number(object, name, H5T_NATIVE_UINT64, &v); !ok) return tl::make_unexpected(ok.error());
  return v;
}

core::Result<double> read_f64_attr(hid_t object, const char* name) {
  double v = 0;
  if (auto ok = read_number(object, name, H5T_NATIVE_DOUBLE, &v); !ok) return tl::make_unexpected(ok.error());
  return v;
}

std::string iso8601_ns(std::uint64_t epoch_ns) {
  const auto seconds = static_cast<time_t>(epoch_ns / kNsPerSecond);
  tm utc{};
  gmtime_r(&seconds, &utc);
  std::array<char, 48> text{};
  std::snprintf(text.data(), text.size(), "%04d-%02d-%02dT%02d:%02d:%02d.%09lluZ", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<unsigned long long>(epoch_ns % kNsPerSecond));
  return text.data();
}

}  // namespace weir::h5

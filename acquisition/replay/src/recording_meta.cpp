// The format check and a channel's metadata: what a recording file must say before its blocks count.
#include <cstdlib>

#include "recording_parts.hpp"
#include "weir/core/channel.hpp"

namespace weir::acq::detail {

namespace {

std::vector<std::string> split_labels(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string label = text.substr(start, end - start);
    label.erase(0, label.find_first_not_of(' '));
    label.erase(label.find_last_not_of(' ') + 1);
    if (!label.empty()) out.push_back(std::move(label));
    start = end + 1;
  }
  return out;
}

// Whether the stored sample type is what `dtype` says.
bool type_matches(hid_t type, core::Dtype dtype) {
  const H5T_class_t cls = H5Tget_class(type);
  const std::size_t size = H5Tget_size(type);
  if (dtype == core::Dtype::c64) {
    if (cls != H5T_COMPOUND || size != 2 * sizeof(float) || H5Tget_nmembers(type) != 2) return false;
    for (unsigned i = 0; i < 2; ++i) {
      const h5::Handle member(H5Tget_member_type(type, i));
      if (H5Tget_class(member.get()) != H5T_FLOAT || H5Tget_size(member.get()) != sizeof(float)) return false;
    }
    return true;
  }
  if (size != core::dtype_bytes(dtype)) return false;
  switch (dtype) {
    case core::Dtype::f32:
    case core::Dtype::f64: return cls == H5T_FLOAT;
    case core::Dtype::i8:
    case core::Dtype::i16:
    case core::Dtype::i32:
    case core::Dtype::i64: return cls == H5T_INTEGER && H5Tget_sign(type) == H5T_SGN_2;
    case core::Dtype::u8:
    case core::Dtype::u16:
    case core::Dtype::u32: return cls == H5T_INTEGER && H5Tget_sign(type) == H5T_SGN_NONE;
    case core::Dtype::c64: break;
  }
  return false;
}

}  // namespace

core::Result<void> check_format(hid_t file, const std::string& path) {
  const H5Place root{path, "/"};
  if (!has_attr(file, "weir_format"))
    return core::fail(core::Errc::invalid_argument,
                      "'" + path + "' has no weir_format attribute: not a weir recording");
  auto format = read_text_attr(file, "weir_format", root);
  if (!format) return tl::make_unexpected(format.error());
  const std::string prefix = std::string(kRecordingFormatName) + " ";
  if (format->rfind(prefix, 0) != 0)
    return core::fail(core::Errc::invalid_argument,
                      "'" + path + "' is '" + *format + "', not a weir recording ('" + prefix + "1')");
  const std::string version = format->substr(prefix.size());
  char* end = nullptr;
  const unsigned long long major = std::strtoull(version.c_str(), &end, 10);
  if (end == version.c_str() || (*end != '\0' && *end != '.'))
    return core::fail(core::Errc::invalid_argument, "'" + path + "' has an unreadable weir_format '" + *format + "'");
  if (major != kRecordingFormatMajor)
    return core::fail(core::Errc::invalid_argument, "'" + path + "' is recording format " + version +
                                                        "; this build reads format " +
                                                        std::to_string(kRecordingFormatMajor));
  return {};
}

core::Result<RecordedChannel> read_metadata(hid_t data, const H5Place& place) {
  RecordedChannel c;
  auto dtype_text = read_text_attr(data, "dtype", place);
  if (!dtype_text) return tl::make_unexpected(dtype_text.error());
  auto dtype = core::parse_dtype(*dtype_text);
  if (!dtype) return tl::make_unexpected(refuse(place, dtype.error().what));
  c.dtype = *dtype;
  auto rate = read_f64_attr(data, "sample_rate_hz", place);
  if (!rate) return tl::make_unexpected(rate.error());
  if (!(*rate > 0)) return tl::make_unexpected(refuse(place, "sample_rate_hz must be positive"));
  c.rate_hz = *rate;
  auto block = read_u64_attr(data, "samples_per_block", place);
  if (!block) return tl::make_unexpected(block.error());
  if (*block == 0 || *block > core::kMaxSamplesPerBlock)
    return tl::make_unexpected(refuse(place, "samples_per_block " + std::to_string(*block) + " is out of range"));
  c.samples_per_block = static_cast<std::uint32_t>(*block);
  if (has_attr(data, "units")) {
    auto units = read_text_attr(data, "units", place);
    if (!units) return tl::make_unexpected(units.error());
    c.units = *units;
  }
  if (has_attr(data, "labels")) {
    auto labels = read_text_attr(data, "labels", place);
    if (!labels) return tl::make_unexpected(labels.error());
    c.labels = split_labels(*labels);
  }
  const h5::Handle type(H5Dget_type(data));
  if (!type || !type_matches(type.get(), c.dtype))
    return tl::make_unexpected(refuse(place, "holds samples that are not " + *dtype_text));
  return c;
}

}  // namespace weir::acq::detail

// The format check and a channel's metadata: what a recording file must say before its blocks count.
#include <cstdlib>

#include "recording_parts.hpp"
#include "weir/core/channel.hpp"
#include "weir/h5/recording_format.hpp"
#include "weir/h5/sample_type.hpp"

namespace weir::h5 {

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

}  // namespace

core::Result<void> check_format(hid_t file, const std::string& path) {
  const detail::Place root{path, "/"};
  if (!has_attr(file, kAttrFormat))
    return core::fail(core::Errc::invalid_argument,
                      "'" + path + "' has no weir_format attribute: not a weir recording");
  auto format = detail::text_attr(file, kAttrFormat, root);
  if (!format) return tl::make_unexpected(format.error());
  const std::string prefix = std::string(kFormatName) + " ";
  if (format->rfind(prefix, 0) != 0)
    return core::fail(core::Errc::invalid_argument,
                      "'" + path + "' is '" + *format + "', not a weir recording ('" + prefix + "1')");
  const std::string version = format->substr(prefix.size());
  char* end = nullptr;
  const unsigned long long major = std::strtoull(version.c_str(), &end, 10);
  if (end == version.c_str() || (*end != '\0' && *end != '.'))
    return core::fail(core::Errc::invalid_argument, "'" + path + "' has an unreadable weir_format '" + *format + "'");
  if (major < kFormatOldestMajor || major > kFormatMajor)
    return core::fail(core::Errc::invalid_argument, "'" + path + "' is recording format " + version +
                                                        "; this build reads formats " +
                                                        std::to_string(kFormatOldestMajor) + " to " +
                                                        std::to_string(kFormatMajor));
  return {};
}

namespace detail {

core::Result<RecordedChannel> read_metadata(hid_t data, const Place& place) {
  RecordedChannel c;
  auto dtype_text = text_attr(data, kAttrDtype, place);
  if (!dtype_text) return tl::make_unexpected(dtype_text.error());
  auto dtype = core::parse_dtype(*dtype_text);
  if (!dtype) return tl::make_unexpected(refuse(place, dtype.error().what));
  c.dtype = *dtype;
  auto rate = f64_attr(data, kAttrSampleRateHz, place);
  if (!rate) return tl::make_unexpected(rate.error());
  if (!(*rate > 0)) return tl::make_unexpected(refuse(place, "sample_rate_hz must be positive"));
  c.rate_hz = *rate;
  auto block = u64_attr(data, kAttrSamplesPerBlock, place);
  if (!block) return tl::make_unexpected(block.error());
  if (*block == 0 || *block > core::kMaxSamplesPerBlock)
    return tl::make_unexpected(refuse(place, "samples_per_block " + std::to_string(*block) + " is out of range"));
  c.samples_per_block = static_cast<std::uint32_t>(*block);
  if (has_attr(data, kAttrUnits)) {
    auto units = text_attr(data, kAttrUnits, place);
    if (!units) return tl::make_unexpected(units.error());
    c.units = *units;
  }
  if (has_attr(data, kAttrLabels)) {
    auto labels = text_attr(data, kAttrLabels, place);
    if (!labels) return tl::make_unexpected(labels.error());
    c.labels = split_labels(*labels);
  }
  const Type type(H5Dget_type(data));
  if (!type || !holds_dtype(type.get(), c.dtype))
    return tl::make_unexpected(refuse(place, "holds samples that are not " + *dtype_text));
  return c;
}

}  // namespace detail

}  // namespace weir::h5

// NeXus metadata from the pipeline: NXsource, an NXdetector's part and settings, calibration, the
// entry's default plot (h5/recording_format.hpp, "NeXus metadata from the pipeline").
#include "nexus_fields.hpp"

#include <algorithm>
#include <utility>

#include "weir/h5/attribute.hpp"
#include "weir/h5/check.hpp"
#include "weir/h5/dataset.hpp"
#include "weir/h5/recording_format.hpp"

namespace weir::rec {

namespace {

core::Result<h5::Dataset> create_scalar(hid_t group, const char* name, hid_t type, const std::string& what) {
  auto space = h5::check<h5::Space>(H5Screate(H5S_SCALAR), "H5Screate", what);
  if (!space) return tl::make_unexpected(space.error());
  auto dcpl = h5::check<h5::PropList>(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate", what);
  if (!dcpl) return tl::make_unexpected(dcpl.error());
  if (auto ok = h5::check(H5Pset_alloc_time(dcpl->get(), H5D_ALLOC_TIME_EARLY), "H5Pset_alloc_time", what); !ok)
    return tl::make_unexpected(ok.error());
  return h5::check<h5::Dataset>(H5Dcreate2(group, name, type, space->get(), H5P_DEFAULT, dcpl->get(), H5P_DEFAULT),
                                "H5Dcreate2", what);
}

template <class T>
core::Result<h5::Dataset> scalar_number(hid_t group, const char* name, hid_t file_type, hid_t mem_type, T value,
                                        const std::string& what) {
  auto d = create_scalar(group, name, file_type, what);
  if (!d) return d;
  if (auto ok = h5::check(H5Dwrite(d->get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value), "H5Dwrite", what); !ok)
    return tl::make_unexpected(ok.error());
  return d;
}

core::Result<void> text_field(hid_t group, const char* name, const std::string& value, const std::string& what) {
  auto d = scalar_text(group, name, value, what + "/" + name);
  if (!d) return tl::make_unexpected(d.error());
  return {};
}

}  // namespace

core::Result<h5::Type> text_type(const std::string& what) {
  auto type = h5::check<h5::Type>(H5Tcopy(H5T_C_S1), "H5Tcopy", what);
  if (!type) return type;
  for (auto ok : {h5::check(H5Tset_size(type->get(), H5T_VARIABLE), "H5Tset_size", what),
                  h5::check(H5Tset_cset(type->get(), H5T_CSET_UTF8), "H5Tset_cset", what)})
    if (!ok) return tl::make_unexpected(ok.error());
  return type;
}

core::Result<void> write_text(hid_t dataset, hid_t type, const std::string& value, const std::string& what) {
  const char* text = value.c_str();
  return h5::check(H5Dwrite(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, &text), "H5Dwrite", what);
}

core::Result<h5::Dataset> scalar_text(hid_t group, const char* name, const std::string& value, const std::string& what) {
  auto type = text_type(what);
  if (!type) return tl::make_unexpected(type.error());
  auto d = create_scalar(group, name, type->get(), what);
  if (!d) return d;
  if (auto ok = write_text(d->get(), type->get(), value, what); !ok) return tl::make_unexpected(ok.error());
  return d;
}

core::Result<void> text_list(hid_t group, const char* name, const std::vector<std::string>& values,
                             const std::string& what) {
  auto type = text_type(what);
  if (!type) return tl::make_unexpected(type.error());
  const hsize_t rows = values.size();
  auto space = h5::check<h5::Space>(H5Screate_simple(1, &rows, nullptr), "H5Screate_simple", what);
  if (!space) return tl::make_unexpected(space.error());
  auto d = h5::check<h5::Dataset>(H5Dcreate2(group, name, type->get(), space->get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                                  "H5Dcreate2", what);
  if (!d) return tl::make_unexpected(d.error());
  if (values.empty()) return {};
  std::vector<const char*> pointers;
  pointers.reserve(values.size());
  for (const std::string& v : values) pointers.push_back(v.c_str());
  return h5::check(H5Dwrite(d->get(), type->get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, pointers.data()), "H5Dwrite", what);
}

core::Result<h5::Dataset> scalar_f64(hid_t group, const char* name, double value, const std::string& what) {
  return scalar_number(group, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, value, what);
}

core::Result<h5::Dataset> scalar_u32(hid_t group, const char* name, std::uint32_t value, const std::string& what) {
  return scalar_number(group, name, H5T_STD_U32LE, H5T_NATIVE_UINT32, value, what);
}

core::Result<void> create_source(hid_t instrument, const SourceNexus& source, const std::string& what) {
  const std::string here = what + "/" + h5::kSource;
  auto g = h5::create_group(instrument, h5::kSource, here, h5::kNxSource);
  if (!g) return tl::make_unexpected(g.error());
  if (auto ok = text_field(g->get(), h5::kSourceName, source.name, here); !ok) return ok;
  if (!source.type.empty())
    if (auto ok = text_field(g->get(), h5::kSourceType, source.type, here); !ok) return ok;
  if (!source.probe.empty())
    if (auto ok = text_field(g->get(), h5::kSourceProbe, source.probe, here); !ok) return ok;
  return {};
}

core::Result<void> write_detector_nexus(hid_t detector, const ChannelNexus& channel, const std::string& raw_units,
                                        const std::string& what) {
  if (!channel.part.empty()) {
    for (auto [name, value] : {std::pair{h5::kDetectorPart, &channel.part}, std::pair{h5::kDetectorDriver, &channel.driver},
                               std::pair{h5::kDetectorRole, &channel.role}})
      if (auto ok = text_field(detector, name, *value, what); !ok) return ok;
    const std::string here = what + "/" + h5::kDetectorSettings;
    auto settings = h5::create_group(detector, h5::kDetectorSettings, here, h5::kNxCollection);
    if (!settings) return tl::make_unexpected(settings.error());
    for (const auto& [name, value] : channel.settings) {
      const std::string link = h5::encode_name(name);
      if (auto ok = text_field(settings->get(), link.c_str(), value, here); !ok) return ok;
    }
  }
  if (const auto& c = channel.calibration) {
    auto scale = scalar_f64(detector, h5::kCalibrationScale, c->scale, what + "/" + h5::kCalibrationScale);
    if (!scale) return tl::make_unexpected(scale.error());
    if (auto ok = h5::attr_text(scale->get(), h5::kAttrUnits, c->units + "/" + raw_units); !ok) return ok;
    auto offset = scalar_f64(detector, h5::kCalibrationOffset, c->offset, what + "/" + h5::kCalibrationOffset);
    if (!offset) return tl::make_unexpected(offset.error());
    if (auto ok = h5::attr_text(offset->get(), h5::kAttrUnits, c->units); !ok) return ok;
    if (auto ok = text_field(detector, h5::kCalibratedUnits, c->units, what); !ok) return ok;
  }
  return {};
}

core::Result<void> write_channel_nexus(hid_t entry, const ChannelStatic& channel, const NexusMeta* nexus,
                                       const std::string& what) {
  const std::string group = h5::encode_name(channel.name);
  // The block tables' units, so that every numeric field of the NXdata has some: counts, indices
  // and flags are dimensionless, the stamps nanoseconds. A table the layout does not have is skipped.
  static constexpr std::pair<const char*, const char*> kTableUnits[] = {
      {h5::kBlockSequence, h5::kCountUnits}, {h5::kBlockOffset, h5::kCountUnits},
      {h5::kBlockSamples, h5::kCountUnits},  {h5::kBlockRealtimeNs, h5::kNanoseconds},
      {h5::kBlockMonotonicNs, h5::kNanoseconds}, {h5::kBlockFlags, h5::kCountUnits}};
  for (const auto& [name, units] : kTableUnits) {
    const std::string path = group + "/" + name;
    if (H5Lexists(entry, path.c_str(), H5P_DEFAULT) <= 0) continue;
    auto table = h5::check<h5::Dataset>(H5Dopen2(entry, path.c_str(), H5P_DEFAULT), "H5Dopen2", what + "/" + path);
    if (!table) return tl::make_unexpected(table.error());
    if (h5::has_attr(table->get(), h5::kAttrUnits)) continue;
    if (auto ok = h5::attr_text(table->get(), h5::kAttrUnits, units); !ok)
      return tl::make_unexpected(core::with_context(ok.error(), what + "/" + path));
  }
  if (nexus == nullptr) return {};
  const auto it = nexus->channels.find(channel.name);
  if (it == nexus->channels.end() || !it->second.calibration) return {};
  const ChannelCalibration& c = *it->second.calibration;
  const std::string path = group + "/" + h5::kData;
  const std::string here = what + "/" + path;
  auto data = h5::check<h5::Dataset>(H5Dopen2(entry, path.c_str(), H5P_DEFAULT), "H5Dopen2", here);
  if (!data) return tl::make_unexpected(data.error());
  for (auto ok : {h5::attr_f64(data->get(), h5::kCalibrationScale, c.scale),
                  h5::attr_f64(data->get(), h5::kCalibrationOffset, c.offset),
                  h5::attr_text(data->get(), h5::kCalibratedUnits, c.units)})
    if (!ok) return tl::make_unexpected(core::with_context(ok.error(), here));
  return {};
}

std::string default_plot(const std::vector<ChannelStatic>& channels, const NexusMeta* nexus) {
  if (channels.empty()) return {};
  if (nexus != nullptr && !nexus->default_plot.empty())
    for (const ChannelStatic& c : channels)
      if (c.name == nexus->default_plot) return h5::encode_name(c.name);
  const auto sample = std::find_if(channels.begin(), channels.end(),
                                   [](const ChannelStatic& c) { return !c.frame.framed(); });
  return h5::encode_name(sample != channels.end() ? sample->name : channels.front().name);
}

}  // namespace weir::rec

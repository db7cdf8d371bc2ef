// The NeXus entry fields of a segment: title, definition, start and end time, the instrument with
// its source and detectors (the pipeline's parts, settings and calibrations: nexus_fields.cpp).
#include "entry_fields.hpp"

#include <map>

#include "nexus_fields.hpp"
#include "weir/h5/attribute.hpp"
#include "weir/h5/check.hpp"
#include "weir/h5/dataset.hpp"
#include "weir/h5/recording_format.hpp"

namespace weir::rec {

namespace {

core::Result<void> create_detector(hid_t instrument, const ChannelStatic& c, const NexusMeta* nexus,
                                   const std::string& what) {
  const std::string name = h5::encode_name(c.name);
  const std::string here = what + "/" + name;
  auto g = h5::create_group(instrument, name, here, h5::kNxDetector);
  if (!g) return tl::make_unexpected(g.error());
  if (auto ok = h5::attr_text(g->get(), h5::kAttrChannel, c.name); !ok) return ok;
  auto rate = scalar_f64(g->get(), h5::kDetectorSampleRate, c.rate_hz, here + "/" + h5::kDetectorSampleRate);
  if (!rate) return tl::make_unexpected(rate.error());
  if (auto ok = h5::attr_text(rate->get(), h5::kAttrUnits, h5::kHertz); !ok) return ok;
  if (auto ok = scalar_text(g->get(), h5::kDetectorUnits, c.units, here + "/" + h5::kDetectorUnits); !ok)
    return tl::make_unexpected(ok.error());
  if (auto ok = scalar_text(g->get(), h5::kDetectorDtype, core::dtype_name(c.dtype), here + "/" + h5::kDetectorDtype);
      !ok)
    return tl::make_unexpected(ok.error());
  auto spb = scalar_u32(g->get(), h5::kDetectorSamplesPerBlock, c.samples_per_block,
                        here + "/" + h5::kDetectorSamplesPerBlock);
  if (!spb) return tl::make_unexpected(spb.error());
  if (auto ok = h5::attr_text(spb->get(), h5::kAttrUnits, h5::kCountUnits); !ok) return ok;
  if (nexus != nullptr)
    if (const auto it = nexus->channels.find(c.name); it != nexus->channels.end())
      return write_detector_nexus(g->get(), it->second, c.units, here);
  return {};
}

// The pipeline's (or a controlled run's) groups under /entry, each with its text fields; a text's
// name is encoded as HDF5 link names are (h5::encode_name: a key name's dots and slashes).
core::Result<void> create_groups(hid_t entry, const std::vector<NexusGroup>& groups, const std::string& what) {
  std::map<std::string, std::pair<h5::Group, std::string>> made;  // name -> (group, its path)
  for (const NexusGroup& g : groups) {
    hid_t parent = entry;
    std::string at = what;
    if (!g.parent.empty()) {
      const auto it = made.find(g.parent);
      if (it == made.end())
        return core::fail(core::Errc::invalid_argument, what + "/" + g.name + ": its parent '" + g.parent + "' comes later");
      parent = it->second.first.get();
      at = it->second.second;
    }
    const std::string here = at + "/" + g.name;
    auto group = h5::create_group(parent, g.name, here, g.nx_class);
    if (!group) return tl::make_unexpected(group.error());
    for (const auto& [name, text] : g.texts) {
      const std::string encoded = h5::encode_name(name);
      if (auto ok = scalar_text(group->get(), encoded.c_str(), text, here + "/" + encoded); !ok)
        return tl::make_unexpected(ok.error());
    }
    if (!g.table.empty()) {
      std::vector<std::string> names, values;
      for (const auto& [name, value] : g.table) {
        names.push_back(name);
        values.push_back(value);
      }
      if (auto ok = text_list(group->get(), "name", names, here + "/name"); !ok) return ok;
      if (auto ok = text_list(group->get(), "value", values, here + "/value"); !ok) return ok;
    }
    made.emplace(g.name, std::make_pair(std::move(*group), here));
  }
  return {};
}

}  // namespace

core::Result<EntryFields> EntryFields::create(hid_t entry, const std::string& title,
                                              const std::vector<ChannelStatic>& channels, const NexusMeta* nexus,
                                              const std::string& what) {
  EntryFields f;
  f.what_ = what;
  const bool given_title = nexus != nullptr && !nexus->title.empty();
  if (auto title_set = scalar_text(entry, h5::kEntryTitle, given_title ? nexus->title : title,
                                   what + "/" + h5::kEntryTitle);
      !title_set)
    return tl::make_unexpected(title_set.error());
  const bool given_definition = nexus != nullptr && !nexus->definition.empty();
  if (auto def = scalar_text(entry, h5::kEntryDefinition, given_definition ? nexus->definition : h5::kDefaultDefinition,
                             what + "/" + h5::kEntryDefinition);
      !def)
    return tl::make_unexpected(def.error());
  if (nexus != nullptr)
    for (const auto& [name, text] : nexus->texts)
      if (auto ok = scalar_text(entry, name.c_str(), text, what + "/" + name); !ok) return tl::make_unexpected(ok.error());
  if (nexus != nullptr)
    if (auto ok = create_groups(entry, nexus->groups, what); !ok) return tl::make_unexpected(ok.error());
  auto start = scalar_text(entry, h5::kEntryStartTime, "", what + "/" + h5::kEntryStartTime);
  if (!start) return tl::make_unexpected(start.error());
  auto end = scalar_text(entry, h5::kEntryEndTime, "", what + "/" + h5::kEntryEndTime);
  if (!end) return tl::make_unexpected(end.error());
  f.start_ = std::move(*start);
  f.end_ = std::move(*end);
  const std::string instrument_what = what + "/" + h5::kInstrument;
  auto instrument = h5::create_group(entry, h5::kInstrument, instrument_what, h5::kNxInstrument);
  if (!instrument) return tl::make_unexpected(instrument.error());
  if (nexus != nullptr && nexus->source)
    if (auto ok = create_source(instrument->get(), *nexus->source, instrument_what); !ok)
      return tl::make_unexpected(ok.error());
  for (const ChannelStatic& c : channels)
    if (auto ok = create_detector(instrument->get(), c, nexus, instrument_what); !ok)
      return tl::make_unexpected(ok.error());
  return f;
}

core::Result<void> EntryFields::write_times(std::uint64_t start_ns, std::uint64_t end_ns) {
  if (!start_.valid() || (start_ns == start_ns_ && end_ns == end_ns_)) return {};
  auto type = text_type(what_);
  if (!type) return tl::make_unexpected(type.error());
  if (auto ok = write_text(start_.get(), type->get(), h5::iso8601_ns(start_ns), what_ + "/" + h5::kEntryStartTime); !ok)
    return ok;
  if (auto ok = write_text(end_.get(), type->get(), h5::iso8601_ns(end_ns), what_ + "/" + h5::kEntryEndTime); !ok)
    return ok;
  start_ns_ = start_ns;
  end_ns_ = end_ns;
  return {};
}

}  // namespace weir::rec

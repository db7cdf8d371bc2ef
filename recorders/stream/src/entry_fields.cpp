// The NeXus entry fields of a segment: title, start and end time, instrument and detectors.
#include "entry_fields.hpp"


#include "weir/h5/attribute.hpp"
#include "weir/h5/check.hpp"
#include "weir/h5/dataset.hpp"
#include "weir/h5/recording_format.hpp"

namespace weir::rec {

namespace {

// Variable-length UTF-8 text, as every text of the format.
core::Result<h5::Type> text_type(const std::string& what) {
  auto type = h5::check<h5::Type>(H5Tcopy(H5T_C_S1), "H5Tcopy", what);
  if (!type) return type;
  for (auto ok : {h5::check(H5Tset_size(type->get(), H5T_VARIABLE), "H5Tset_size", what),
                  h5::check(H5Tset_cset(type->get(), H5T_CSET_UTF8), "H5Tset_cset", what)})
    if (!ok) return tl::make_unexpected(ok.error());
  return type;
}

// A scalar dataset of `type`, its storage allocated at once (nothing is allocated for it under SWMR).
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

template <class T>
core::Result<h5::Dataset> scalar_number(hid_t group, const char* name, hid_t file_type, hid_t mem_type, T value,
                                        const std::string& what) {
  auto d = create_scalar(group, name, file_type, what);
  if (!d) return d;
  if (auto ok = h5::check(H5Dwrite(d->get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value), "H5Dwrite", what); !ok)
    return tl::make_unexpected(ok.error());
  return d;
}

core::Result<void> create_detector(hid_t instrument, const ChannelStatic& c, const std::string& what) {
  const std::string name = h5::encode_name(c.name);
  const std::string here = what + "/" + name;
  auto g = h5::create_group(instrument, name, here, h5::kNxDetector);
  if (!g) return tl::make_unexpected(g.error());
  if (auto ok = h5::attr_text(g->get(), h5::kAttrChannel, c.name); !ok) return ok;
  auto rate = scalar_number(g->get(), h5::kDetectorSampleRate, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, c.rate_hz,
                            here + "/" + h5::kDetectorSampleRate);
  if (!rate) return tl::make_unexpected(rate.error());
  if (auto ok = h5::attr_text(rate->get(), h5::kAttrUnits, h5::kHertz); !ok) return ok;
  if (auto ok = scalar_text(g->get(), h5::kDetectorUnits, c.units, here + "/" + h5::kDetectorUnits); !ok)
    return tl::make_unexpected(ok.error());
  if (auto ok = scalar_text(g->get(), h5::kDetectorDtype, core::dtype_name(c.dtype), here + "/" + h5::kDetectorDtype);
      !ok)
    return tl::make_unexpected(ok.error());
  auto spb = scalar_number(g->get(), h5::kDetectorSamplesPerBlock, H5T_STD_U32LE, H5T_NATIVE_UINT32,
                           c.samples_per_block, here + "/" + h5::kDetectorSamplesPerBlock);
  if (!spb) return tl::make_unexpected(spb.error());
  return {};
}

}  // namespace

core::Result<EntryFields> EntryFields::create(hid_t entry, const std::string& title,
                                              const std::vector<ChannelStatic>& channels, const std::string& what) {
  EntryFields f;
  f.what_ = what;
  if (auto title_set = scalar_text(entry, h5::kEntryTitle, title, what + "/" + h5::kEntryTitle); !title_set)
    return tl::make_unexpected(title_set.error());
  auto start = scalar_text(entry, h5::kEntryStartTime, "", what + "/" + h5::kEntryStartTime);
  if (!start) return tl::make_unexpected(start.error());
  auto end = scalar_text(entry, h5::kEntryEndTime, "", what + "/" + h5::kEntryEndTime);
  if (!end) return tl::make_unexpected(end.error());
  f.start_ = std::move(*start);
  f.end_ = std::move(*end);
  const std::string instrument_what = what + "/" + h5::kInstrument;
  auto instrument = h5::create_group(entry, h5::kInstrument, instrument_what, h5::kNxInstrument);
  if (!instrument) return tl::make_unexpected(instrument.error());
  for (const ChannelStatic& c : channels)
    if (auto ok = create_detector(instrument->get(), c, instrument_what); !ok) return tl::make_unexpected(ok.error());
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

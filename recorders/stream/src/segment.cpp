// One segment file: layout, SWMR, flush, close.
#include "segment.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "nexus_fields.hpp"
#include "weir/h5/attribute.hpp"
#include "weir/h5/check.hpp"
#include "weir/h5/dataset.hpp"
#include "weir/h5/recording_format.hpp"
#include "weir/h5/sample_type.hpp"
#include "weir/recorder/format.hpp"

#ifndef WEIR_VERSION
#define WEIR_VERSION "unknown"
#endif

namespace weir::rec {

namespace {

core::Result<void> write_root_attrs(hid_t root, const SegmentMeta& m) {
  using namespace h5;  // the format's names
  for (auto ok : {attr_text(root, kAttrFormat, kFormatWritten), attr_text(root, kAttrVersion, WEIR_VERSION),
                  attr_u64(root, kAttrRun, m.run), attr_u64(root, kAttrSegment, m.segment),
                  attr_text(root, kAttrStartTime, iso8601_ns(m.start_ns)), attr_u64(root, kAttrStartNs, m.start_ns),
                  attr_text(root, kAttrStopTime, ""), attr_u64(root, kAttrStopNs, 0),
                  attr_text(root, kAttrHost, m.host), attr_text(root, kAttrArena, m.arena),
                  attr_text(root, kAttrArenaGeometry, m.arena_geometry),
                  attr_u64(root, kAttrArenaCreatedNs, m.arena_created_ns), attr_text(root, kAttrPipeline, m.pipeline),
                  attr_u64(root, kAttrRecorderPid, m.recorder_pid),
                  attr_u64(root, kAttrRecorderStartTicks, m.recorder_start_ticks),
                  attr_text(root, kAttrCreator, kCreator), attr_text(root, kAttrDefault, kEntry)})
    if (!ok) return ok;
  return {};
}

// A fixed-size 1-D dataset of n elements (one chunk: SWMR writes chunked datasets), written later.
core::Result<h5::Dataset> create_vector(hid_t group, const char* name, core::Dtype dtype, std::uint32_t n,
                                        const std::string& what) {
  const hsize_t dims[1] = {n};
  auto space = h5::check<h5::Space>(H5Screate_simple(1, dims, nullptr), "H5Screate_simple", what);
  if (!space) return tl::make_unexpected(space.error());
  auto dcpl = h5::check<h5::PropList>(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate", what);
  if (!dcpl) return tl::make_unexpected(dcpl.error());
  if (auto ok = h5::check(H5Pset_chunk(dcpl->get(), 1, dims), "H5Pset_chunk", what); !ok)
    return tl::make_unexpected(ok.error());
  const h5::Type type = h5::sample_type(dtype);
  return h5::check<h5::Dataset>(H5Dcreate2(group, name, type.get(), space->get(), H5P_DEFAULT, dcpl->get(), H5P_DEFAULT),
                                "H5Dcreate2", what);
}

core::Result<void> write_vector(hid_t dataset, core::Dtype dtype, const std::vector<std::byte>& value,
                                const std::string& what) {
  const h5::Type type = h5::sample_type(dtype);
  return h5::check(H5Dwrite(dataset, type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, value.data()), "H5Dwrite", what);
}

// A spectrum's axis is an energy when its units are an energy's (the mca's `energy` calibration
// gives keV), else the pulse height it measures, in the input's units (format 1.6).
bool energy_units(std::string_view units) {
  return units == "eV" || units == "keV" || units == "MeV" || units == "GeV";
}

}  // namespace

core::Result<void> Segment::create_plots(const std::vector<ChannelStatic>& channels, const std::vector<KeySpec>& specs) {
  using namespace h5;  // the format's names
  for (std::size_t i = 0; i < keys_.size(); ++i) {
    const KeyLog& signal = keys_[i];
    if (!signal.is_array() || signal.array().rank != 1) continue;
    ArrayPlot plot;
    plot.signal = i;
    plot.axis = plot.units = keys_.size();
    plot.axis_key = signal.key() + kAxisSuffix;
    for (std::size_t j = 0; j < keys_.size(); ++j) {
      if (keys_[j].key() == plot.axis_key) plot.axis = j;
      if (keys_[j].key() == plot.axis_key + kUnitsSuffix) plot.units = j;
    }
    if (plot.axis == keys_.size()) continue;
    const KeyLog& axis = keys_[plot.axis];
    if (!axis.is_array() || axis.array().rank != 1 || axis.array().dims[0] != signal.array().dims[0]) continue;
    std::string link = encode_name(signal.key());
    if (std::any_of(channels.begin(), channels.end(), [&](const ChannelStatic& c) { return encode_name(c.name) == link; }))
      link += kPlotCollisionSuffix;
    const std::string& axis_units = specs[plot.axis].units;
    plot.axis_name = !signal.key().ends_with(kSpectrumSuffix) ? kPlotAxis
                     : energy_units(axis_units)                ? kPlotEnergy
                                                               : kPlotPulseHeight;
    plot.what = path_.string() + " /" + kEntry + "/" + link;
    auto group = create_group(entry_.get(), link, plot.what, kNxData);
    if (!group) return tl::make_unexpected(group.error());
    plot.group = std::move(*group);
    const hid_t id = plot.group.get();
    for (auto ok : {attr_text(id, kAttrSignal, kPlotSignal), attr_text(id, kAttrAxes, plot.axis_name),
                    attr_u32(id, (plot.axis_name + "_indices").c_str(), 0),
                    attr_text(id, kAttrPlotSource, signal.key() + ", " + plot.axis_key)})
      if (!ok) return tl::make_unexpected(with_context(ok.error(), plot.what));
    const std::uint32_t n = signal.array().dims[0];
    auto counts = create_vector(id, kPlotSignal, signal.array().elem, n, plot.what + "/" + kPlotSignal);
    if (!counts) return tl::make_unexpected(counts.error());
    plot.counts = std::move(*counts);
    auto values = create_vector(id, plot.axis_name.c_str(), axis.array().elem, n, plot.what + "/" + plot.axis_name);
    if (!values) return tl::make_unexpected(values.error());
    plot.axis_values = std::move(*values);
    // Filled in when the values are known: SWMR rewrites attributes in place but cannot add them.
    const std::string label = axis_units.empty() ? plot.axis_key : plot.axis_name + " (" + axis_units + ")";
    for (auto ok : {attr_text(plot.counts.get(), kAttrLongName, signal.key()),
                    attr_text(plot.counts.get(), kAttrUnits, kPlotSignal),
                    attr_text(plot.axis_values.get(), kAttrUnits, axis_units),
                    attr_text(plot.axis_values.get(), kAttrLongName, label)})
      if (!ok) return tl::make_unexpected(with_context(ok.error(), plot.what));
    plot.units_text = axis_units;
    plot.units_written = !axis_units.empty();
    plots_.push_back(std::move(plot));
  }
  return {};
}

core::Result<void> Segment::write_plots() {
  using namespace h5;  // the format's names
  for (ArrayPlot& p : plots_) {
    const KeyLog& signal = keys_[p.signal];
    const KeyLog& axis = keys_[p.axis];
    if (signal.rows() != p.signal_rows && !signal.last_array().empty()) {
      if (auto ok = write_vector(p.counts.get(), signal.array().elem, signal.last_array(), p.what); !ok) return ok;
      p.signal_rows = signal.rows();
    }
    if (axis.rows() != p.axis_rows && !axis.last_array().empty()) {
      if (auto ok = write_vector(p.axis_values.get(), axis.array().elem, axis.last_array(), p.what); !ok) return ok;
      p.axis_rows = axis.rows();
    }
    if (p.units < keys_.size()) {
      const std::string units = keys_[p.units].last_text();
      if (!units.empty() && (!p.units_written || units != p.units_text)) {
        const std::string label = p.axis_name + " (" + units + ")";
        for (auto ok : {rewrite_text(p.axis_values.get(), kAttrUnits, units),
                        rewrite_text(p.axis_values.get(), kAttrLongName, label)})
          if (!ok) return tl::make_unexpected(with_context(ok.error(), p.what));
        p.units_text = units;
        p.units_written = true;
      }
    }
  }
  return {};
}

core::Result<void> Segment::create_clock(const HostClock& clock) {
  using namespace h5;  // the format's names
  const std::string what = path_.string() + " /" + kEntry + "/" + kClock;
  auto group = create_group(entry_.get(), kClock, what, kNxCollection);
  if (!group) return tl::make_unexpected(group.error());
  clock_group_ = std::move(*group);
  const hid_t id = clock_group_.get();
  for (auto ok : {attr_text(id, kAttrSampleClock, kSampleClockText), attr_text(id, kAttrSyncSource, clock.source),
                  attr_u32(id, kAttrSynchronised, clock.synchronised ? 1 : 0), attr_i64(id, kAttrSyncState, clock.state),
                  attr_u64(id, kAttrSyncStatus, clock.status), attr_text(id, kAttrSyncFlags, clock.status_text),
                  attr_i64(id, kAttrEstErrorUs, clock.est_error_us), attr_i64(id, kAttrMaxErrorUs, clock.max_error_us)})
    if (!ok) return tl::make_unexpected(with_context(ok.error(), what));
  offset_file_type_ = clock_offset_row_type(true);
  offset_mem_type_ = clock_offset_row_type(false);
  auto offsets = Column::create(id,
                                ColumnSpec{kClockOffsets, offset_file_type_.get(), offset_mem_type_.get(),
                                           sizeof(ClockOffsetRow), kClockChunkRows, 1},
                                what + "/" + kClockOffsets);
  if (!offsets) return tl::make_unexpected(offsets.error());
  clock_offsets_ = std::move(*offsets);
  add_clock_offset(kClockOpened);
  return {};
}

void Segment::add_clock_offset(std::uint8_t event) noexcept {
  const ClockPair now = read_clock_pair();
  const h5::ClockOffsetRow row{now.realtime_ns, now.monotonic_ns, now.offset_ns(), event};
  std::memcpy(clock_offsets_.stage_end(), &row, sizeof row);
  clock_offsets_.commit(1);
}

core::Result<Segment> Segment::create(const std::filesystem::path& path, const SegmentMeta& meta,
                                      const std::vector<ChannelStatic>& channels, const std::vector<KeySpec>& keys,
                                      EncodePool* pool, bool direct_chunks) {
  const std::string file = path.string();
  std::error_code ec;
  if (std::filesystem::exists(path, ec))
    return core::fail(core::Errc::already_exists, "segment " + file + " exists; never overwritten");
  Segment s;
  s.path_ = path;
  s.start_ns_ = meta.start_ns;
  s.compressed_ = std::any_of(channels.begin(), channels.end(),
                              [](const ChannelStatic& c) { return c.codec.method != codec::Method::none; });
  {
    auto fapl = h5::check<h5::PropList>(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate", file);
    if (!fapl) return tl::make_unexpected(fapl.error());
    // SWMR needs the 1.10 file format: version 3 superblock, extensible-array chunk indexes.
    if (auto ok = h5::check(H5Pset_libver_bounds(fapl->get(), H5F_LIBVER_LATEST, H5F_LIBVER_LATEST),
                           "H5Pset_libver_bounds", file);
        !ok)
      return tl::make_unexpected(ok.error());
    auto f = h5::check<h5::File>(H5Fcreate(file.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl->get()), "H5Fcreate", file);
    if (!f) return tl::make_unexpected(f.error());
    s.file_ = std::move(*f);
  }
  const std::string first = default_plot(channels, meta.nexus);
  {
    auto root = h5::check<h5::Group>(H5Gopen2(s.file_.get(), "/", H5P_DEFAULT), "H5Gopen2", file + " /");
    if (!root) return tl::make_unexpected(root.error());
    if (auto ok = write_root_attrs(root->get(), meta); !ok)
      return tl::make_unexpected(with_context(ok.error(), file));
  }
  const std::string entry_path = file + " /" + h5::kEntry;
  auto entry = h5::create_group(s.file_.get(), h5::kEntry, entry_path, h5::kNxEntry);
  if (!entry) return tl::make_unexpected(entry.error());
  s.entry_ = std::move(*entry);
  if (!first.empty())
    if (auto ok = h5::attr_text(s.entry_.get(), h5::kAttrDefault, first); !ok)
      return tl::make_unexpected(with_context(ok.error(), entry_path));
  auto fields = EntryFields::create(s.entry_.get(), meta.arena + " run " + std::to_string(meta.run), channels,
                                    meta.nexus, entry_path);
  if (!fields) return tl::make_unexpected(fields.error());
  s.entry_fields_ = std::move(*fields);
  if (auto ok = s.create_clock(meta.clock); !ok) return tl::make_unexpected(ok.error());
  s.channels_.reserve(channels.size());
  for (const ChannelStatic& c : channels) {
    auto group = ChannelGroup::create(s.entry_.get(), c, pool, meta.start_ns, file, direct_chunks);
    if (!group) return tl::make_unexpected(group.error());
    if (auto ok = write_channel_nexus(s.entry_.get(), c, meta.nexus, entry_path); !ok)
      return tl::make_unexpected(ok.error());
    s.channels_.push_back(std::move(*group));
  }
  if (!keys.empty()) {
    auto group = h5::create_group(s.entry_.get(), h5::kKeys, entry_path + "/" + h5::kKeys, h5::kNxCollection);
    if (!group) return tl::make_unexpected(group.error());
    s.keys_group_ = std::move(*group);
    const std::string start_time = h5::iso8601_ns(meta.start_ns);
    s.keys_.reserve(keys.size());
    for (const KeySpec& k : keys) {
      auto log = KeyLog::create(s.keys_group_.get(), k, start_time, file);
      if (!log) return tl::make_unexpected(log.error());
      s.keys_.push_back(std::move(*log));
    }
    if (auto ok = s.create_plots(channels, keys); !ok) return tl::make_unexpected(ok.error());
  }
  // Every object exists now: from here on HDF5 only appends, and readers may follow.
  if (auto ok = h5::check(H5Fstart_swmr_write(s.file_.get()), "H5Fstart_swmr_write", file); !ok)
    return tl::make_unexpected(ok.error());
  if (auto ok = h5::check(H5Fflush(s.file_.get(), H5F_SCOPE_LOCAL), "H5Fflush", file); !ok)
    return tl::make_unexpected(ok.error());
  return s;
}

core::Result<void> Segment::flush(bool final) {
  for (ChannelGroup& c : channels_)
    if (auto ok = c.flush(final); !ok) return ok;
  for (KeyLog& k : keys_)
    if (auto ok = k.flush(); !ok) return ok;
  if (auto ok = write_plots(); !ok) return ok;
  if (auto ok = clock_offsets_.write_partial(); !ok) return ok;
  if (auto ok = write_entry_times(0); !ok) return ok;
  if (auto ok = h5::check(H5Fflush(file_.get(), H5F_SCOPE_LOCAL), "H5Fflush", path_.string()); !ok) return ok;
  for (ChannelGroup& c : channels_) c.mark_durable();
  for (KeyLog& k : keys_) k.mark_durable();
  clock_offsets_.mark_durable();
  return {};
}

void Segment::roll_back_keys() noexcept {
  for (KeyLog& k : keys_) k.roll_back();
}

core::Result<void> Segment::close_file() {
  channels_.clear();  // datasets and groups first: the file closes only when nothing in it is open
  plots_.clear();
  keys_.clear();
  entry_fields_ = EntryFields();
  clock_offsets_ = Column();
  clock_group_.reset();
  keys_group_.reset();
  entry_.reset();
  if (!file_.reset()) return tl::make_unexpected(h5::error("H5Fclose", path_.string()));
  return {};
}

core::Result<void> Segment::close(std::uint64_t stop_ns, int* keep_fd) {
  if (keep_fd != nullptr) *keep_fd = -1;
  if (!file_.valid()) return {};
  add_clock_offset(h5::kClockClosed);
  auto ok = flush(true);
  if (ok) {
    auto root = h5::check<h5::Group>(H5Gopen2(file_.get(), "/", H5P_DEFAULT), "H5Gopen2", path_.string() + " /");
    if (!root) {
      ok = tl::make_unexpected(root.error());
    } else {
      ok = write_entry_times(stop_ns);
      if (ok) ok = h5::rewrite_text(root->get(), h5::kAttrStopTime, h5::iso8601_ns(stop_ns));
      if (ok) ok = h5::rewrite_u64(root->get(), h5::kAttrStopNs, stop_ns);
      if (!ok) ok = tl::make_unexpected(with_context(ok.error(), path_.string()));
    }
  }
  if (keep_fd != nullptr) *keep_fd = duplicate_fd();
  auto closed = close_file();
  return ok ? closed : ok;
}

core::Result<void> Segment::write_entry_times(std::uint64_t stop_ns) {
  std::uint64_t first = ~std::uint64_t{0}, last = 0;
  bool any = false;
  for (const ChannelGroup& c : channels_) {
    if (!c.any_block()) continue;
    any = true;
    first = std::min(first, c.first_realtime_ns());
    last = std::max(last, c.last_realtime_ns());
  }
  if (!any) {
    if (stop_ns == 0) return {};
    first = start_ns_;
    last = stop_ns;
  }
  return entry_fields_.write_times(first, last);
}

core::Result<void> Segment::sync() {
  void* handle = nullptr;
  if (H5Fget_vfd_handle(file_.get(), H5P_DEFAULT, &handle) < 0 || handle == nullptr)
    return tl::make_unexpected(h5::error("H5Fget_vfd_handle", path_.string()));
  if (::fsync(*static_cast<int*>(handle)) != 0) {
    const int e = errno;
    return core::fail(core::Errc::io_error, "fsync " + path_.string() + ": errno = " + std::to_string(e) + ", " +
                                                std::strerror(e));
  }
  return {};
}

int Segment::duplicate_fd() const noexcept {
  void* handle = nullptr;
  if (!file_.valid() || H5Fget_vfd_handle(file_.get(), H5P_DEFAULT, &handle) < 0 || handle == nullptr) {
    (void)h5::last_error();
    return -1;
  }
  return ::fcntl(*static_cast<int*>(handle), F_DUPFD_CLOEXEC, 0);
}

core::Result<void> Segment::abandon() {
  if (!file_.valid()) return {};
  return close_file();
}

std::uint64_t Segment::file_bytes() const noexcept {
  hsize_t size = 0;
  if (!file_.valid() || H5Fget_filesize(file_.get(), &size) < 0) return 0;
  return size;
}

std::uint64_t Segment::committed_bytes() const noexcept {
  std::uint64_t bytes = 0;
  for (const ChannelGroup& c : channels_) bytes += c.committed_bytes();
  return bytes;
}

std::uint64_t Segment::bytes() const noexcept {
  std::uint64_t handed = 0;
  for (const ChannelGroup& c : channels_) handed += c.bytes_written();
  return std::max(handed, file_bytes());
}

}  // namespace weir::rec

// One segment file: layout, SWMR, flush, close.
#include "segment.hpp"

#include <algorithm>
#include <cstring>
#include <system_error>

#include "weir/h5/attribute.hpp"
#include "weir/h5/check.hpp"
#include "weir/h5/dataset.hpp"
#include "weir/h5/recording_format.hpp"
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

}  // namespace

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
                                           sizeof(ClockOffsetRow), kClockChunkRows, 1, 0},
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
                                      int compress) {
  const std::string file = path.string();
  std::error_code ec;
  if (std::filesystem::exists(path, ec))
    return core::fail(core::Errc::already_exists, "segment " + file + " exists; never overwritten");
  Segment s;
  s.path_ = path;
  s.start_ns_ = meta.start_ns;
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
  const std::string first = channels.empty() ? "" : h5::encode_name(channels.front().name);
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
  if (auto ok = s.create_clock(meta.clock); !ok) return tl::make_unexpected(ok.error());
  s.channels_.reserve(channels.size());
  for (const ChannelStatic& c : channels) {
    auto group = ChannelGroup::create(s.entry_.get(), c, compress, meta.start_ns, file);
    if (!group) return tl::make_unexpected(group.error());
    s.channels_.push_back(std::move(*group));
  }
  if (!keys.empty()) {
    auto group = h5::create_group(s.entry_.get(), h5::kKeys, entry_path + "/" + h5::kKeys, h5::kNxCollection);
    if (!group) return tl::make_unexpected(group.error());
    s.keys_group_ = std::move(*group);
    const std::string start_time = h5::iso8601_ns(meta.start_ns);
    s.keys_.reserve(keys.size());
    for (const KeySpec& k : keys) {
      auto log = KeyLog::create(s.keys_group_.get(), k.name, k.numeric, k.text_width, start_time, file);
      if (!log) return tl::make_unexpected(log.error());
      s.keys_.push_back(std::move(*log));
    }
  }
  // Every object exists now: from here on HDF5 only appends, and readers may follow.
  if (auto ok = h5::check(H5Fstart_swmr_write(s.file_.get()), "H5Fstart_swmr_write", file); !ok)
    return tl::make_unexpected(ok.error());
  if (auto ok = h5::check(H5Fflush(s.file_.get(), H5F_SCOPE_LOCAL), "H5Fflush", file); !ok)
    return tl::make_unexpected(ok.error());
  return s;
}

core::Result<void> Segment::flush() {
  for (ChannelGroup& c : channels_)
    if (auto ok = c.flush(); !ok) return ok;
  for (KeyLog& k : keys_)
    if (auto ok = k.flush(); !ok) return ok;
  if (auto ok = clock_offsets_.write_partial(); !ok) return ok;
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
  keys_.clear();
  clock_offsets_ = Column();
  clock_group_.reset();
  keys_group_.reset();
  entry_.reset();
  if (!file_.reset()) return tl::make_unexpected(h5::error("H5Fclose", path_.string()));
  return {};
}

core::Result<void> Segment::close(std::uint64_t stop_ns) {
  if (!file_.valid()) return {};
  add_clock_offset(h5::kClockClosed);
  auto ok = flush();
  if (ok) {
    auto root = h5::check<h5::Group>(H5Gopen2(file_.get(), "/", H5P_DEFAULT), "H5Gopen2", path_.string() + " /");
    if (!root) {
      ok = tl::make_unexpected(root.error());
    } else {
      ok = h5::rewrite_text(root->get(), h5::kAttrStopTime, h5::iso8601_ns(stop_ns));
      if (ok) ok = h5::rewrite_u64(root->get(), h5::kAttrStopNs, stop_ns);
      if (!ok) ok = tl::make_unexpected(with_context(ok.error(), path_.string()));
    }
  }
  auto closed = close_file();
  return ok ? closed : ok;
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

std::uint64_t Segment::bytes() const noexcept {
  std::uint64_t handed = 0;
  for (const ChannelGroup& c : channels_) handed += c.bytes_written();
  return std::max(handed, file_bytes());
}

}  // namespace weir::rec

// One channel's datasets in one segment file.
#include "channel_group.hpp"

#include <cstring>
#include <limits>
#include <vector>

#include "weir/core/channel.hpp"
#include "weir/core/clock.hpp"
#include "weir/h5/attribute.hpp"
#include "weir/h5/check.hpp"
#include "weir/h5/dataset.hpp"
#include "weir/h5/sample_type.hpp"

namespace weir::rec {

namespace {

template <class T>
void stage(Column& column, T value) noexcept {
  std::memcpy(column.stage_end(), &value, sizeof value);
  column.commit(1);
}

}  // namespace

core::Result<ChannelGroup> ChannelGroup::create(hid_t entry, const ChannelStatic& channel, int compress,
                                                std::uint64_t start_ns, const std::string& file, bool direct_chunks) {
  ChannelGroup g;
  g.channel_ = channel;
  g.start_ns_ = start_ns;
  const std::string link = h5::encode_name(channel.name);
  g.what_ = file + " /" + h5::kEntry + "/" + link;
  auto group = h5::create_group(entry, link, g.what_, h5::kNxData);
  if (!group) return tl::make_unexpected(group.error());
  g.group_ = std::move(*group);
  const hid_t gid = g.group_.get();
  const bool framed = channel.frame.framed() && channel.frame.frame_elements > 0;
  g.row_elements_ = framed ? channel.frame.frame_elements : 1;
  const std::string frame_axis = framed ? h5::frame_axis_link(channel.frame.axis.name) : std::string();
  for (auto ok : {h5::attr_text(gid, h5::kAttrSignal, h5::kData), h5::attr_text(gid, h5::kAttrChannel, channel.name),
                  h5::attr_text(gid, h5::kAttrPolicy, channel.policy),
                  h5::attr_u32(gid, h5::kAttrTimeIndices, 0)})
    if (!ok) return tl::make_unexpected(with_context(ok.error(), g.what_));
  if (auto ok = g.write_axes(frame_axis); !ok) return tl::make_unexpected(ok.error());
  // The time axis exists, written, before SWMR starts; the first block rewrites its start in place.
  // A frame channel's time steps by frames.
  const std::vector<double> axis{std::numeric_limits<double>::quiet_NaN(),
                                 static_cast<double>(g.row_elements_) / channel.rate_hz};
  const std::string time_what = g.what_ + "/" + h5::kTime;
  if (auto ok = h5::write_numbers(gid, h5::kTime, time_what, axis); !ok) return tl::make_unexpected(ok.error());
  g.time_ = h5::Dataset(H5Dopen2(gid, h5::kTime, H5P_DEFAULT));
  if (!g.time_) return tl::make_unexpected(h5::error("H5Dopen2", time_what));
  for (auto ok : {h5::attr_text(g.time_.get(), h5::kAttrUnits, h5::kTimeUnits),
                  h5::attr_text(g.time_.get(), h5::kAttrStart, h5::iso8601_ns(start_ns)),
                  h5::attr_text(g.time_.get(), h5::kAttrLongName, "time since start_time (s)")})
    if (!ok) return tl::make_unexpected(with_context(ok.error(), time_what));

  g.sample_type_ = h5::sample_type(channel.dtype);
  g.compressed_ = compress > 0;
  const std::uint64_t chunk = data_chunk_samples(channel.samples_per_block, channel.sample_bytes);
  g.chunk_blocks_ = std::max<std::uint64_t>(1, chunk / std::max<std::uint32_t>(1, channel.samples_per_block));
  // A frame channel's elements are rows of frame_elements samples: chunks of whole frames.
  const std::uint64_t rows = g.row_elements_;
  auto data = Column::create(gid,
                             ColumnSpec{h5::kData, g.sample_type_.get(), g.sample_type_.get(),
                                        channel.sample_bytes * rows, std::max<std::uint64_t>(1, chunk / rows),
                                        std::max<std::uint64_t>(1, channel.samples_per_block / rows), compress, false,
                                        nullptr, framed ? rows : 0, direct_chunks},
                             g.what_ + "/" + h5::kData);
  if (!data) return tl::make_unexpected(data.error());
  g.data_ = std::move(*data);
  const hid_t did = g.data_.id();
  for (auto ok : {h5::attr_text(did, h5::kAttrUnits, channel.units),
                  h5::attr_f64(did, h5::kAttrSampleRateHz, channel.rate_hz),
                  h5::attr_text(did, h5::kAttrLongName,
                                channel.units.empty() ? channel.name : channel.name + " (" + channel.units + ")"),
                  h5::attr_text(did, h5::kAttrLabels, channel.labels),
                  h5::attr_text(did, h5::kAttrDtype, core::dtype_name(channel.dtype)),
                  h5::attr_u32(did, h5::kAttrSamplesPerBlock, channel.samples_per_block),
                  h5::attr_text(did, h5::kAttrFirstSampleTime, ""), h5::attr_text(did, h5::kAttrClock, ""),
                  h5::attr_u64(did, h5::kAttrFirstSampleNs, 0), h5::attr_u64(did, h5::kAttrFirstSampleIndex, 0)})
    if (!ok) return tl::make_unexpected(with_context(ok.error(), g.what_ + "/" + h5::kData));
  if (framed)
    for (auto ok : {h5::attr_u32(did, h5::kAttrFramesPerBlock, channel.frame.frames_per_block),
                    h5::attr_u32(did, h5::kAttrFrameElements, channel.frame.frame_elements)})
      if (!ok) return tl::make_unexpected(with_context(ok.error(), g.what_ + "/" + h5::kData));

  const std::uint64_t unwritten = h5::kUnwrittenSequence;
  const auto table = [&](Column& out, const char* name, hid_t type, std::size_t bytes) -> core::Result<void> {
    const void* fill = &out == &g.sequence_ ? &unwritten : nullptr;
    auto column = Column::create(gid, ColumnSpec{name, type, type, bytes, kTableChunkRows, 1, 0, true, fill},
                                 g.what_ + "/" + name);
    if (!column) return tl::make_unexpected(column.error());
    out = std::move(*column);
    return {};
  };
  for (auto ok : {table(g.sequence_, h5::kBlockSequence, H5T_NATIVE_UINT64, 8),
                  table(g.offset_, h5::kBlockOffset, H5T_NATIVE_UINT64, 8),
                  table(g.samples_, h5::kBlockSamples, H5T_NATIVE_UINT32, 4),
                  table(g.realtime_, h5::kBlockRealtimeNs, H5T_NATIVE_UINT64, 8),
                  table(g.monotonic_, h5::kBlockMonotonicNs, H5T_NATIVE_UINT64, 8),
                  table(g.flags_, h5::kBlockFlags, H5T_NATIVE_UINT32, 4)})
    if (!ok) return tl::make_unexpected(ok.error());

  const GapRow unwritten_gap{0, 0, h5::kUnwrittenReason, 0};
  g.gap_file_type_ = h5::gap_row_type(true);
  g.gap_mem_type_ = h5::gap_row_type(false);
  auto gaps = Column::create(
      gid,
      ColumnSpec{h5::kGaps, g.gap_file_type_.get(), g.gap_mem_type_.get(), sizeof(GapRow), kGapChunkRows, 1, 0, true,
                 &unwritten_gap},
      g.what_ + "/" + h5::kGaps);
  if (!gaps) return tl::make_unexpected(gaps.error());
  g.gaps_ = std::move(*gaps);
  if (auto ok = h5::attr_text(g.gaps_.id(), h5::kAttrReasonNames, h5::kGapReasonList); !ok)
    return tl::make_unexpected(with_context(ok.error(), g.what_ + "/" + h5::kGaps));
  g.step_file_type_ = h5::clock_step_row_type(true);
  g.step_mem_type_ = h5::clock_step_row_type(false);
  auto steps = Column::create(gid,
                              ColumnSpec{h5::kClockSteps, g.step_file_type_.get(), g.step_mem_type_.get(),
                                         sizeof(h5::ClockStepRow), kClockChunkRows, 1, 0},
                              g.what_ + "/" + h5::kClockSteps);
  if (!steps) return tl::make_unexpected(steps.error());
  g.steps_ = std::move(*steps);
  return g;
}

void ChannelGroup::commit_block(const BlockMeta& meta) noexcept {
  // A frame channel keeps whole frames: a torn last frame of a short block is not recorded.
  const std::uint64_t offset = data_.size() * row_elements_;
  const std::uint32_t rows = static_cast<std::uint32_t>(meta.samples / row_elements_);
  data_.commit(rows);
  stage(sequence_, meta.sequence);
  stage(offset_, offset);
  stage(samples_, static_cast<std::uint32_t>(rows * row_elements_));
  stage(realtime_, meta.realtime_ns);
  stage(monotonic_, meta.monotonic_ns);
  stage(flags_, meta.flags);
  clock_seen_ |= (meta.flags & core::kBlockSourceTimeFlag) != 0 ? kSawSourceClock : kSawHostClock;
  if (!any_block_) {
    any_block_ = true;
    first_pending_ = true;
    first_ = meta;
  } else {
    // A later block stamped earlier: the realtime clock stepped back. (Forward steps look like a
    // pause of the writer, and replays and simulators stamp monotonic time of their own: only the
    // host's offsets table shows those.)
    if (meta.realtime_ns < last_realtime_ns_) {
      const auto jump = -static_cast<std::int64_t>(last_realtime_ns_ - meta.realtime_ns);
      const h5::ClockStepRow row{meta.sequence, jump, meta.realtime_ns, meta.monotonic_ns};
      std::memcpy(steps_.stage_end(), &row, sizeof row);
      steps_.commit(1);
    }
  }
  last_sequence_ = meta.sequence;
  last_realtime_ns_ = meta.realtime_ns;
}

bool ChannelGroup::pending() const noexcept {
  return first_pending_ || clock_seen_ != clock_written_ || data_.chunk_ready() || sequence_.chunk_ready() || gaps_.chunk_ready() ||
         steps_.chunk_ready();
}

core::Result<void> ChannelGroup::write_first_block_attrs() {
  const hid_t did = data_.id();
  for (auto ok : {h5::rewrite_text(did, h5::kAttrFirstSampleTime, h5::iso8601_ns(first_.realtime_ns)),
                  h5::rewrite_u64(did, h5::kAttrFirstSampleNs, first_.realtime_ns),
                  h5::rewrite_u64(did, h5::kAttrFirstSampleIndex, first_.first_sample)})
    if (!ok) return tl::make_unexpected(with_context(ok.error(), what_ + "/" + h5::kData));
  // Signed: a block from the ring may predate the segment.
  const double start_s = static_cast<double>(static_cast<std::int64_t>(first_.realtime_ns - start_ns_)) /
                         static_cast<double>(core::kNsPerSecond);
  if (auto ok = h5::write_rows(time_.get(), H5T_NATIVE_DOUBLE, 0, 1, 0, &start_s, what_ + "/" + h5::kTime); !ok)
    return ok;
  first_pending_ = false;
  return {};
}

core::Result<void> ChannelGroup::write_clock() {
  if (clock_seen_ == clock_written_) return {};
  const char* clock = clock_seen_ == kSawSourceClock ? h5::kClockSource
                      : clock_seen_ == kSawHostClock ? h5::kClockHost
                                                     : h5::kClockMixed;
  if (auto ok = h5::rewrite_text(data_.id(), h5::kAttrClock, clock); !ok)
    return tl::make_unexpected(with_context(ok.error(), what_ + "/" + h5::kData));
  clock_written_ = clock_seen_;
  return {};
}

core::Result<void> ChannelGroup::write_axes(const std::string& frame_axis) {
  const hid_t gid = group_.get();
  if (frame_axis.empty()) return h5::attr_text(gid, h5::kAttrAxes, h5::kTime);
  // NeXus: axes names one axis per dimension of data, each AXISNAME_indices the dimension it scales.
  const std::vector<std::string> axes{h5::kTime, frame_axis};
  const std::string indices = frame_axis + h5::kAttrIndicesSuffix;
  for (auto ok : {h5::attr_text_list(gid, h5::kAttrAxes, axes), h5::attr_u32(gid, indices.c_str(), 1)})
    if (!ok) return tl::make_unexpected(with_context(ok.error(), what_));
  const core::FrameShape& frame = channel_.frame;
  std::vector<double> values(frame.frame_elements);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = frame.axis.start + static_cast<double>(i) * frame.axis.step;
  const std::string what = what_ + "/" + frame_axis;
  if (auto ok = h5::write_numbers(gid, frame_axis, what, values); !ok) return ok;
  const h5::Dataset axis(H5Dopen2(gid, frame_axis.c_str(), H5P_DEFAULT));
  if (!axis) return tl::make_unexpected(h5::error("H5Dopen2", what));
  const std::string name = frame.axis.name.empty() ? std::string(h5::kDefaultFrameAxis) : frame.axis.name;
  for (auto ok : {h5::attr_text(axis.get(), h5::kAttrUnits, frame.axis.units),
                  h5::attr_text(axis.get(), h5::kAttrLongName,
                                frame.axis.units.empty() ? name : name + " (" + frame.axis.units + ")"),
                  h5::attr_f64(axis.get(), h5::kAttrAxisStart, frame.axis.start),
                  h5::attr_f64(axis.get(), h5::kAttrAxisStep, frame.axis.step),
                  h5::attr_text(axis.get(), h5::kAttrAxisValuesKey, frame.axis.values_key)})
    if (!ok) return tl::make_unexpected(with_context(ok.error(), what));
  return {};
}

core::Result<void> ChannelGroup::write_tables(bool partial) {
  const std::uint64_t handed = partial ? sequence_.size() : sequence_.size() - sequence_.size() % kTableChunkRows;
  if (handed > sequence_.written()) (void)sequence_.read_staged(handed - 1, &handed_last_sequence_);
  for (Column* c : {&offset_, &samples_, &realtime_, &monotonic_, &flags_, &sequence_}) {  // sequence last: it says a block is there
    auto ok = partial ? c->write_partial() : c->write_chunks();
    if (!ok) return ok;
  }
  return {};
}

core::Result<void> ChannelGroup::write_pending() {
  if (first_pending_)
    if (auto ok = write_first_block_attrs(); !ok) return ok;
  if (auto ok = write_clock(); !ok) return ok;
  if (auto ok = data_.write_chunks(); !ok) return ok;
  if (sequence_.chunk_ready())
    if (auto ok = write_tables(false); !ok) return ok;
  if (auto ok = steps_.write_chunks(); !ok) return ok;
  return gaps_.write_chunks();
}

bool ChannelGroup::add_gap(const GapRow& row) noexcept {
  // Markers (0 blocks) and dropped_at_source rows (no sequence numbers of their own) never merge.
  const auto mergeable = [](const GapRow& r) {
    return r.blocks > 0 && r.reason != static_cast<std::uint8_t>(GapReason::dropped_at_source);
  };
  if (has_last_gap_ && mergeable(row) && mergeable(last_gap_) && last_gap_.reason == row.reason &&
      last_gap_.sequence + last_gap_.blocks == row.sequence) {
    last_gap_.blocks += row.blocks;
    gaps_.replace_last(&last_gap_);  // HDF5 may have it already: then it is handed over again
    return false;
  }
  std::memcpy(gaps_.stage_end(), &row, sizeof row);
  gaps_.commit(1);
  last_gap_ = row;
  has_last_gap_ = true;
  return true;
}

core::Result<void> ChannelGroup::write_gaps() { return gaps_.write_partial(); }

core::Result<void> ChannelGroup::flush() {
  if (first_pending_)
    if (auto ok = write_first_block_attrs(); !ok) return ok;
  if (auto ok = write_clock(); !ok) return ok;
  if (auto ok = data_.write_partial(); !ok) return ok;
  if (auto ok = write_tables(true); !ok) return ok;
  if (auto ok = steps_.write_partial(); !ok) return ok;
  return gaps_.write_partial();
}

void ChannelGroup::mark_durable() noexcept {
  for (Column* c : {&data_, &sequence_, &offset_, &samples_, &realtime_, &monotonic_, &flags_, &gaps_, &steps_})
    c->mark_durable();
  if (sequence_.durable() > 0) {
    any_durable_ = true;
    durable_next_ = handed_last_sequence_ + 1;
  }
}

std::uint64_t ChannelGroup::roll_back(std::uint64_t next_sequence) noexcept {
  const bool lost_rows = sequence_.size() > sequence_.durable();
  for (Column* c : {&sequence_, &offset_, &samples_, &realtime_, &monotonic_, &flags_, &data_, &gaps_, &steps_})
    (void)c->roll_back();  // best effort: if HDF5 cannot even shrink, the file keeps its last flushed state
  has_last_gap_ = false;   // the file's last row may be an older state of it: the next row is a new one
  if (any_durable_) return durable_next_;
  return lost_rows ? first_.sequence : next_sequence;
}

std::uint64_t ChannelGroup::bytes_written() const noexcept {
  constexpr std::uint64_t kRowBytes = 4 * sizeof(std::uint64_t) + 2 * sizeof(std::uint32_t);  // the six tables
  const std::uint64_t samples = compressed_ ? 0 : samples_written() * channel_.sample_bytes;
  return samples + sequence_.written() * kRowBytes + gaps_.written() * sizeof(GapRow);
}


}  // namespace weir::rec

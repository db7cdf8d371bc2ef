// One channel's datasets in one segment file.
#include "channel_group.hpp"

#include <cstring>
#include <limits>
#include <vector>

#include "weir/core/channel.hpp"
#include "weir/core/clock.hpp"
#include "weir/core/event_record.hpp"
#include "weir/h5/attribute.hpp"
#include "weir/h5/check.hpp"
#include "weir/h5/dataset.hpp"
#include "weir/h5/sample_type.hpp"

namespace weir::rec {

namespace {

// One sample of a short block's padding: NaN for floating dtypes (each part of a complex one), 0 else.
std::vector<std::byte> pad_sample(core::Dtype dtype, std::uint32_t sample_bytes) {
  std::vector<std::byte> pad(sample_bytes);
  const float nan32 = std::numeric_limits<float>::quiet_NaN();
  const double nan64 = std::numeric_limits<double>::quiet_NaN();
  if (dtype == core::Dtype::f32 || dtype == core::Dtype::c64)
    for (std::size_t at = 0; at + sizeof nan32 <= pad.size(); at += sizeof nan32) std::memcpy(pad.data() + at, &nan32, sizeof nan32);
  if (dtype == core::Dtype::f64) std::memcpy(pad.data(), &nan64, sizeof nan64);
  return pad;
}

}  // namespace

core::Result<ChannelGroup> ChannelGroup::create(hid_t entry, const ChannelStatic& channel, EncodePool* pool,
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
  // Rows of data (2.0): frames of a frame channel, whole blocks of a sample channel.
  g.framed_ = framed;
  g.row_elements_ = framed ? channel.frame.frame_elements : std::max<std::uint32_t>(1, channel.samples_per_block);
  g.rows_per_block_ = framed ? std::max<std::uint32_t>(1, channel.frame.frames_per_block) : 1;
  g.row_seconds_ = static_cast<double>(g.row_elements_) / channel.rate_hz;
  const std::string second_axis = framed ? h5::frame_axis_link(channel.frame.axis.name) : std::string(h5::kTimeInBlock);
  for (auto ok : {h5::attr_text(gid, h5::kAttrSignal, h5::kData), h5::attr_text(gid, h5::kAttrChannel, channel.name),
                  h5::attr_text(gid, h5::kAttrPolicy, channel.policy),
                  h5::attr_u32(gid, h5::kAttrTimeIndices, 0)})
    if (!ok) return tl::make_unexpected(with_context(ok.error(), g.what_));
  if (auto ok = g.write_axes(second_axis); !ok) return tl::make_unexpected(ok.error());

  g.sample_type_ = h5::sample_type(channel.dtype);
  g.compressed_ = channel.codec.method != codec::Method::none;
  g.pad_ = pad_sample(channel.dtype, channel.sample_bytes);
  const std::uint64_t chunk = data_chunk_samples(channel.samples_per_block, channel.sample_bytes);
  g.chunk_blocks_ = std::max<std::uint64_t>(1, chunk / std::max<std::uint32_t>(1, channel.samples_per_block));
  // Chunks of whole rows; the time axis is chunked as data is (at most a table chunk's rows, so a
  // slow channel of tiny blocks does not allocate a quarter MiB of times).
  const std::uint64_t row = g.row_elements_;
  const std::uint64_t chunk_rows = std::max<std::uint64_t>(1, chunk / row);
  ColumnSpec data_spec{h5::kData, g.sample_type_.get(), g.sample_type_.get(), channel.sample_bytes * row, chunk_rows,
                       g.rows_per_block_};
  data_spec.cache = false;
  data_spec.cols = row;
  data_spec.direct = direct_chunks;
  if (g.compressed_) {
    data_spec.codec = channel.codec;
    data_spec.codec_element_bytes = channel.sample_bytes;
    data_spec.pool = pool;
  }
  auto data = Column::create(gid, data_spec, g.what_ + "/" + h5::kData);
  if (!data) return tl::make_unexpected(data.error());
  g.data_ = std::move(*data);
  const std::string time_what = g.what_ + "/" + h5::kTime;
  auto time = Column::create(gid,
                             ColumnSpec{h5::kTime, H5T_NATIVE_DOUBLE, H5T_NATIVE_DOUBLE, sizeof(double),
                                        std::min<std::uint64_t>(chunk_rows, kTableChunkRows), g.rows_per_block_},
                             time_what);
  if (!time) return tl::make_unexpected(time.error());
  g.time_ = std::move(*time);
  for (auto ok : {h5::attr_text(g.time_.id(), h5::kAttrUnits, h5::kTimeUnits),
                  h5::attr_text(g.time_.id(), h5::kAttrStart, h5::iso8601_ns(start_ns)),
                  h5::attr_text(g.time_.id(), h5::kAttrLongName,
                                framed ? "time of the frame since start_time (s)" : "time of the block since start_time (s)")})
    if (!ok) return tl::make_unexpected(with_context(ok.error(), time_what));
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

  if (core::is_event_channel(channel.dtype, channel.frame)) {
    auto events = EventGroup::create(entry, link, channel.units, channel.frame.frames_per_block, file);
    if (!events) return tl::make_unexpected(events.error());
    g.events_ = std::move(*events);
  }
  if (core::is_pv_log_channel(channel.dtype, channel.frame) && channel.pv_log != nullptr) {
    auto logs = PvLogGroup::create(entry, link, channel.frame.frames_per_block, *channel.pv_log, file);
    if (!logs) return tl::make_unexpected(logs.error());
    g.pv_logs_ = std::move(*logs);
  }

  const std::uint64_t unwritten = h5::kUnwrittenSequence;
  const auto table = [&](Column& out, const char* name, hid_t type, std::size_t bytes) -> core::Result<void> {
    const void* fill = &out == &g.sequence_ ? &unwritten : nullptr;
    ColumnSpec spec{name, type, type, bytes, kTableChunkRows, 1};
    spec.fill = fill;
    auto column = Column::create(gid, spec, g.what_ + "/" + name);
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
  ColumnSpec gap_spec{h5::kGaps, g.gap_file_type_.get(), g.gap_mem_type_.get(), sizeof(GapRow), kGapChunkRows, 1};
  gap_spec.fill = &unwritten_gap;
  auto gaps = Column::create(gid, gap_spec, g.what_ + "/" + h5::kGaps);
  if (!gaps) return tl::make_unexpected(gaps.error());
  g.gaps_ = std::move(*gaps);
  if (auto ok = h5::attr_text(g.gaps_.id(), h5::kAttrReasonNames, h5::kGapReasonList); !ok)
    return tl::make_unexpected(with_context(ok.error(), g.what_ + "/" + h5::kGaps));
  g.step_file_type_ = h5::clock_step_row_type(true);
  g.step_mem_type_ = h5::clock_step_row_type(false);
  auto steps = Column::create(gid,
                              ColumnSpec{h5::kClockSteps, g.step_file_type_.get(), g.step_mem_type_.get(),
                                         sizeof(h5::ClockStepRow), kClockChunkRows, 1},
                              g.what_ + "/" + h5::kClockSteps);
  if (!steps) return tl::make_unexpected(steps.error());
  g.steps_ = std::move(*steps);
  return g;
}

void ChannelGroup::commit_block(const BlockMeta& meta) noexcept {
  // A frame channel keeps whole frames: a torn last frame of a short block is not recorded. A
  // sample channel's block is one row, its tail padded when the block is short.
  const std::uint64_t offset = data_.size() * row_elements_;
  std::uint32_t rows = 0;
  std::uint32_t samples = 0;
  if (framed_) {
    rows = static_cast<std::uint32_t>(meta.samples / row_elements_);
    samples = static_cast<std::uint32_t>(rows * row_elements_);
  } else if (meta.samples > 0) {
    rows = 1;
    samples = meta.samples;
    std::byte* tail = data_.stage_end() + std::size_t{samples} * channel_.sample_bytes;
    for (std::uint64_t i = samples; i < row_elements_; ++i, tail += channel_.sample_bytes)
      std::memcpy(tail, pad_.data(), channel_.sample_bytes);
  }
  // Each row's time: the block's stamp, and a frame's place in its block, since the axis's origin:
  // the segment's start, or the first block's stamp when that is earlier (a block from the ring,
  // --from-oldest), so times are >= 0 (a later block earlier than the first: the clock stepped back).
  if (!any_block_) origin_ns_ = std::min(start_ns_, meta.realtime_ns);
  const double block_s = static_cast<double>(static_cast<std::int64_t>(meta.realtime_ns - origin_ns_)) /
                         static_cast<double>(core::kNsPerSecond);
  if (events_.valid()) {  // an event's row is at its own time
    for (std::uint32_t r = 0; r < rows; ++r) {
      double offset_ns = 0;
      std::memcpy(&offset_ns, data_.stage_end() + std::size_t{r} * row_elements_ * channel_.sample_bytes, sizeof offset_ns);
      time_.push(block_s + offset_ns / static_cast<double>(core::kNsPerSecond));
    }
    events_.commit(meta.realtime_ns, data_.stage_end(), rows);
  } else {
    for (std::uint32_t r = 0; r < rows; ++r) time_.push(block_s + r * row_seconds_);
    if (pv_logs_.valid()) pv_logs_.commit(data_.stage_end(), rows);  // a row is one entry
  }
  data_.commit(rows);
  samples_committed_ += samples;
  sequence_.push(meta.sequence);
  offset_.push(offset);
  samples_.push(samples);
  realtime_.push(meta.realtime_ns);
  monotonic_.push(meta.monotonic_ns);
  flags_.push(meta.flags);
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
  return first_pending_ || clock_seen_ != clock_written_ || data_.chunk_ready() || time_.chunk_ready() ||
         (events_.valid() && events_.chunk_ready()) || (pv_logs_.valid() && pv_logs_.pending()) ||
         sequence_.chunk_ready() || gaps_.chunk_ready() || steps_.chunk_ready();
}

core::Result<void> ChannelGroup::write_first_block_attrs() {
  const hid_t did = data_.id();
  for (auto ok : {h5::rewrite_text(did, h5::kAttrFirstSampleTime, h5::iso8601_ns(first_.realtime_ns)),
                  h5::rewrite_u64(did, h5::kAttrFirstSampleNs, first_.realtime_ns),
                  h5::rewrite_u64(did, h5::kAttrFirstSampleIndex, first_.first_sample)})
    if (!ok) return tl::make_unexpected(with_context(ok.error(), what_ + "/" + h5::kData));
  if (origin_ns_ != start_ns_)
    if (auto ok = h5::rewrite_text(time_.id(), h5::kAttrStart, h5::iso8601_ns(origin_ns_)); !ok)
      return tl::make_unexpected(with_context(ok.error(), what_ + "/" + h5::kTime));
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

core::Result<void> ChannelGroup::write_axes(const std::string& second_axis) {
  const hid_t gid = group_.get();
  // NeXus: axes names one axis per dimension of data, each AXISNAME_indices the dimension it scales.
  const std::vector<std::string> axes{h5::kTime, second_axis};
  const std::string indices = second_axis + h5::kAttrIndicesSuffix;
  for (auto ok : {h5::attr_text_list(gid, h5::kAttrAxes, axes), h5::attr_u32(gid, indices.c_str(), 1)})
    if (!ok) return tl::make_unexpected(with_context(ok.error(), what_));
  // A frame channel's axis as it declares it; a sample channel's the time of each column after its row's.
  core::FrameAxis axis = channel_.frame.axis;
  if (!framed_) axis = core::FrameAxis{"time in block", h5::kTimeUnits, 0.0, 1.0 / channel_.rate_hz, ""};
  std::vector<double> values(row_elements_);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = axis.start + static_cast<double>(i) * axis.step;
  const std::string what = what_ + "/" + second_axis;
  if (auto ok = h5::write_numbers(gid, second_axis, what, values); !ok) return ok;
  const h5::Dataset dataset(H5Dopen2(gid, second_axis.c_str(), H5P_DEFAULT));
  if (!dataset) return tl::make_unexpected(h5::error("H5Dopen2", what));
  const std::string name = axis.name.empty() ? std::string(h5::kDefaultFrameAxis) : axis.name;
  for (auto ok : {h5::attr_text(dataset.get(), h5::kAttrUnits, axis.units),
                  h5::attr_text(dataset.get(), h5::kAttrLongName, axis.units.empty() ? name : name + " (" + axis.units + ")"),
                  h5::attr_f64(dataset.get(), h5::kAttrAxisStart, axis.start),
                  h5::attr_f64(dataset.get(), h5::kAttrAxisStep, axis.step),
                  h5::attr_text(dataset.get(), h5::kAttrAxisValuesKey, axis.values_key)})
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
  if (auto ok = time_.write_chunks(); !ok) return ok;
  if (events_.valid())
    if (auto ok = events_.write_chunks(); !ok) return ok;
  if (pv_logs_.valid())
    if (auto ok = pv_logs_.write_chunks(); !ok) return ok;
  if (sequence_.chunk_ready()) {
    // The sequence table says a block is there: every data chunk it covers goes to HDF5 first.
    if (auto ok = data_.drain(); !ok) return ok;
    if (auto ok = write_tables(false); !ok) return ok;
  }
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

core::Result<void> ChannelGroup::flush(bool final) {
  if (first_pending_)
    if (auto ok = write_first_block_attrs(); !ok) return ok;
  if (auto ok = write_clock(); !ok) return ok;
  if (auto ok = data_.write_partial(); !ok) return ok;
  if (auto ok = time_.write_partial(); !ok) return ok;
  if (events_.valid())
    if (auto ok = events_.write_partial(); !ok) return ok;
  if (pv_logs_.valid())
    if (auto ok = pv_logs_.write_partial(final); !ok) return ok;
  if (auto ok = write_tables(true); !ok) return ok;
  if (auto ok = steps_.write_partial(); !ok) return ok;
  return gaps_.write_partial();
}

void ChannelGroup::mark_durable() noexcept {
  for (Column* c : {&data_, &time_, &sequence_, &offset_, &samples_, &realtime_, &monotonic_, &flags_, &gaps_, &steps_})
    c->mark_durable();
  if (events_.valid()) events_.mark_durable();
  if (pv_logs_.valid()) pv_logs_.mark_durable();
  samples_durable_ = samples_written();
  if (sequence_.durable() > 0) {
    any_durable_ = true;
    durable_next_ = handed_last_sequence_ + 1;
  }
}

std::uint64_t ChannelGroup::roll_back(std::uint64_t next_sequence) noexcept {
  const bool lost_rows = sequence_.size() > sequence_.durable();
  for (Column* c : {&sequence_, &offset_, &samples_, &realtime_, &monotonic_, &flags_, &data_, &time_, &gaps_, &steps_})
    (void)c->roll_back();  // best effort: if HDF5 cannot even shrink, the file keeps its last flushed state
  has_last_gap_ = false;   // the file's last row may be an older state of it: the next row is a new one
  samples_committed_ = samples_durable_;
  if (events_.valid()) events_.roll_back();
  if (pv_logs_.valid()) pv_logs_.roll_back();
  if (any_durable_) return durable_next_;
  return lost_rows ? first_.sequence : next_sequence;
}

std::uint64_t ChannelGroup::samples_written() const noexcept {
  // The rows HDF5 does not have yet are all still staged.
  std::uint64_t staged = 0;
  for (std::uint64_t row = samples_.written(); row < samples_.size(); ++row) {
    std::uint32_t n = 0;
    if (samples_.read_staged(row, &n)) staged += n;
  }
  return samples_committed_ - staged;
}

std::uint64_t ChannelGroup::committed_bytes() const noexcept {
  return data_.size() * row_elements_ * channel_.sample_bytes + time_.size() * sizeof(double) +
         sequence_.size() * kTableRowBytes + gaps_.size() * sizeof(GapRow);
}

std::uint64_t ChannelGroup::block_bytes() const noexcept {
  return rows_per_block_ * (row_elements_ * channel_.sample_bytes + sizeof(double)) + kTableRowBytes;
}

std::uint64_t ChannelGroup::bytes_written() const noexcept {
  const std::uint64_t samples = compressed_ ? 0 : data_.written() * row_elements_ * channel_.sample_bytes;
  return samples + time_.written() * sizeof(double) + sequence_.written() * kTableRowBytes + gaps_.written() * sizeof(GapRow);
}


}  // namespace weir::rec

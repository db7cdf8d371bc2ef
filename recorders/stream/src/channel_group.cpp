// One channel's datasets in one segment file.
#include "channel_group.hpp"

#include <cstring>

#include "h5_util.hpp"
#include "process_info.hpp"
#include "weir/core/channel.hpp"
#include "weir/h5/sample_type.hpp"

namespace weir::rec {

namespace {

h5::Handle gap_type(bool packed) {
  h5::Handle type{H5Tcreate(H5T_COMPOUND, sizeof(GapRow))};
  H5Tinsert(type.get(), "sequence", offsetof(GapRow, sequence), H5T_NATIVE_UINT64);
  H5Tinsert(type.get(), "blocks", offsetof(GapRow, blocks), H5T_NATIVE_UINT64);
  H5Tinsert(type.get(), "reason", offsetof(GapRow, reason), H5T_NATIVE_UINT8);
  H5Tinsert(type.get(), "realtime_ns", offsetof(GapRow, realtime_ns), H5T_NATIVE_UINT64);
  if (packed) H5Tpack(type.get());  // 25 bytes a row in the file, no padding
  return type;
}

template <class T>
void stage(Column& column, T value) noexcept {
  std::memcpy(column.stage_end(), &value, sizeof value);
  column.commit(1);
}

}  // namespace

std::uint64_t data_chunk_samples(std::uint32_t samples_per_block, std::uint32_t sample_bytes) noexcept {
  const std::uint64_t block_bytes = std::uint64_t{samples_per_block} * sample_bytes;
  if (block_bytes == 0) return 1;
  if (block_bytes <= kTargetChunkBytes) return (kTargetChunkBytes / block_bytes) * samples_per_block;
  return kTargetChunkBytes / sample_bytes;
}

core::Result<ChannelGroup> ChannelGroup::create(hid_t entry, const ChannelStatic& channel, int compress,
                                                const std::string& file) {
  ChannelGroup g;
  g.channel_ = channel;
  const std::string link = encode_name(channel.name);
  g.what_ = file + " /entry/" + link;
  auto group = create_group(entry, link, "NXdata", g.what_);
  if (!group) return tl::make_unexpected(group.error());
  g.group_ = std::move(*group);
  const hid_t gid = g.group_.get();
  for (auto ok : {attr_text(gid, "signal", "data"), attr_text(gid, "channel", channel.name),
                  attr_text(gid, "policy", channel.policy)})
    if (!ok) return tl::make_unexpected(with_context(ok.error(), g.what_));

  g.sample_type_ = h5::sample_type(channel.dtype);
  g.compressed_ = compress > 0;
  const std::uint64_t chunk = data_chunk_samples(channel.samples_per_block, channel.sample_bytes);
  g.chunk_blocks_ = std::max<std::uint64_t>(1, chunk / std::max<std::uint32_t>(1, channel.samples_per_block));
  auto data = Column::create(gid,
                             ColumnSpec{"data", g.sample_type_.get(), g.sample_type_.get(), channel.sample_bytes, chunk,
                                        channel.samples_per_block, compress, false},
                             g.what_ + "/data");
  if (!data) return tl::make_unexpected(data.error());
  g.data_ = std::move(*data);
  const hid_t did = g.data_.id();
  for (auto ok : {attr_text(did, "units", channel.units), attr_f64(did, "sample_rate_hz", channel.rate_hz),
                  attr_text(did, "labels", channel.labels), attr_text(did, "dtype", core::dtype_name(channel.dtype)),
                  attr_u32(did, "samples_per_block", channel.samples_per_block),
                  attr_fixed_text(did, "first_sample_time", "", kTimeTextBytes), attr_u64(did, "first_sample_ns", 0),
                  attr_u64(did, "first_sample_index", 0)})
    if (!ok) return tl::make_unexpected(with_context(ok.error(), g.what_ + "/data"));

  const std::uint64_t unwritten = kUnwrittenSequence;
  const auto table = [&](Column& out, const char* name, hid_t type, std::size_t bytes) -> core::Result<void> {
    const void* fill = &out == &g.sequence_ ? &unwritten : nullptr;
    auto column = Column::create(gid, ColumnSpec{name, type, type, bytes, kTableChunkRows, 1, 0, true, fill},
                                 g.what_ + "/" + name);
    if (!column) return tl::make_unexpected(column.error());
    out = std::move(*column);
    return {};
  };
  for (auto ok : {table(g.sequence_, "block_sequence", H5T_NATIVE_UINT64, 8),
                  table(g.offset_, "block_offset", H5T_NATIVE_UINT64, 8),
                  table(g.samples_, "block_samples", H5T_NATIVE_UINT32, 4),
                  table(g.realtime_, "block_realtime_ns", H5T_NATIVE_UINT64, 8),
                  table(g.monotonic_, "block_monotonic_ns", H5T_NATIVE_UINT64, 8),
                  table(g.flags_, "block_flags", H5T_NATIVE_UINT32, 4)})
    if (!ok) return tl::make_unexpected(ok.error());

  const GapRow unwritten_gap{0, 0, kUnwrittenReason, 0};
  g.gap_file_type_ = gap_type(true);
  g.gap_mem_type_ = gap_type(false);
  auto gaps = Column::create(
      gid,
      ColumnSpec{"gaps", g.gap_file_type_.get(), g.gap_mem_type_.get(), sizeof(GapRow), kGapChunkRows, 1, 0, true,
                 &unwritten_gap},
      g.what_ + "/gaps");
  if (!gaps) return tl::make_unexpected(gaps.error());
  g.gaps_ = std::move(*gaps);
  if (auto ok = attr_text(g.gaps_.id(), "reason_names", kGapReasonList); !ok)
    return tl::make_unexpected(with_context(ok.error(), g.what_ + "/gaps"));
  return g;
}

void ChannelGroup::commit_block(const BlockMeta& meta) noexcept {
  const std::uint64_t offset = data_.size();
  data_.commit(meta.samples);
  stage(sequence_, meta.sequence);
  stage(offset_, offset);
  stage(samples_, meta.samples);
  stage(realtime_, meta.realtime_ns);
  stage(monotonic_, meta.monotonic_ns);
  stage(flags_, meta.flags);
  if (!any_block_) {
    any_block_ = true;
    first_pending_ = true;
    first_ = meta;
  }
  last_sequence_ = meta.sequence;
}

bool ChannelGroup::pending() const noexcept {
  return first_pending_ || data_.chunk_ready() || sequence_.chunk_ready() || gaps_.chunk_ready();
}

core::Result<void> ChannelGroup::write_first_block_attrs() {
  const hid_t did = data_.id();
  for (auto ok : {rewrite_fixed_text(did, "first_sample_time", iso8601_ns(first_.realtime_ns), kTimeTextBytes),
                  rewrite_u64(did, "first_sample_ns", first_.realtime_ns),
                  rewrite_u64(did, "first_sample_index", first_.first_sample)})
    if (!ok) return tl::make_unexpected(with_context(ok.error(), what_ + "/data"));
  first_pending_ = false;
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
  if (auto ok = data_.write_chunks(); !ok) return ok;
  if (sequence_.chunk_ready())
    if (auto ok = write_tables(false); !ok) return ok;
  return gaps_.write_chunks();
}

void ChannelGroup::add_gap(const GapRow& row) noexcept {
  std::memcpy(gaps_.stage_end(), &row, sizeof row);
  gaps_.commit(1);
}

core::Result<void> ChannelGroup::write_gaps() { return gaps_.write_partial(); }

core::Result<void> ChannelGroup::flush() {
  if (first_pending_)
    if (auto ok = write_first_block_attrs(); !ok) return ok;
  if (auto ok = data_.write_partial(); !ok) return ok;
  if (auto ok = write_tables(true); !ok) return ok;
  return gaps_.write_partial();
}

void ChannelGroup::mark_durable() noexcept {
  for (Column* c : {&data_, &sequence_, &offset_, &samples_, &realtime_, &monotonic_, &flags_, &gaps_})
    c->mark_durable();
  if (sequence_.durable() > 0) {
    any_durable_ = true;
    durable_next_ = handed_last_sequence_ + 1;
  }
}

std::uint64_t ChannelGroup::roll_back(std::uint64_t next_sequence) noexcept {
  const bool lost_rows = sequence_.size() > sequence_.durable();
  for (Column* c : {&sequence_, &offset_, &samples_, &realtime_, &monotonic_, &flags_, &data_, &gaps_})
    (void)c->roll_back();  // best effort: if HDF5 cannot even shrink, the file keeps its last flushed state
  if (any_durable_) return durable_next_;
  return lost_rows ? first_.sequence : next_sequence;
}

std::uint64_t ChannelGroup::bytes_written() const noexcept {
  constexpr std::uint64_t kRowBytes = 4 * sizeof(std::uint64_t) + 2 * sizeof(std::uint32_t);  // the six tables
  const std::uint64_t samples = compressed_ ? 0 : data_.written() * channel_.sample_bytes;
  return samples + sequence_.written() * kRowBytes + gaps_.written() * sizeof(GapRow);
}


}  // namespace weir::rec

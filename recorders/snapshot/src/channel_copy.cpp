// /channels/<name>: each channel's descriptor as attributes and its last blocks, copied oldest
// first by core's BlockCopier, each validated against its block's state word.
#include <algorithm>
#include <cstring>

#include "parts.hpp"
#include "weir/core/arena_layout.hpp"
#include "weir/core/block_copier.hpp"
#include "weir/h5/sample_type.hpp"

namespace weir::rec::detail {

namespace {

constexpr std::uint64_t kChunkBytes = 1ULL << 20;  // HDF5 chunk of a channel's data
constexpr const char* kSkipReasons[] = {"overwritten", "unwritten"};
enum class SkipReason : std::uint8_t { overwritten = 0, unwritten = 1 };

struct SkipRow {
  std::uint64_t sequence;
  std::uint8_t reason;
};

struct BlockTable {
  std::vector<std::uint64_t> sequence, offset, realtime_ns, monotonic_ns, first_sample;
  std::vector<std::uint32_t> samples, flags;
  std::vector<SkipRow> skipped;
};

h5::Type skip_row_type() {
  const h5::Type reason = enum_type(kSkipReasons);
  h5::Type t(H5Tcreate(H5T_COMPOUND, sizeof(SkipRow)));
  H5Tinsert(t.get(), "sequence", HOFFSET(SkipRow, sequence), H5T_NATIVE_UINT64);
  H5Tinsert(t.get(), "reason", HOFFSET(SkipRow, reason), reason.get());
  return t;
}

core::Result<void> write_descriptor(hid_t g, const core::ChannelInfo& info, const core::ChannelDesc& d,
                                    const Labels& labels) {
  const auto text = [&](const char* name, std::string_view v) { return attr_text(g, name, v); };
  const auto u64 = [&](const char* name, std::uint64_t v) { return attr_u64(g, name, v); };
  for (auto ok : {text("name", info.name),
                  u64("index", info.index),
                  text("dtype", core::dtype_name(d.dtype)),
                  u64("sample_bytes", d.sample_bytes),
                  u64("samples_per_block", d.samples_per_block),
                  u64("ring_blocks", d.ring_blocks),
                  attr_f64(g, "sample_rate_hz", info.rate_hz),
                  text("units", info.units),
                  text("labels", labels.names_of(d.label_ids)),
                  u64("labels_mask", d.labels),
                  u64("label_ids", d.label_ids),
                  text("full_policy", d.full_policy == core::FullPolicy::drop ? "drop" : "wait"),
                  attr_i64(g, "wait_timeout_ns", d.wait_timeout_ns),
                  u64("created_ns", d.created_ns),
                  text("created_time", iso8601_ns(d.created_ns)),
                  u64("blocks_written", info.blocks_written),
                  u64("samples_written", info.samples_written),
                  u64("dropped_at_source", info.dropped_at_source),
                  u64("writer_waits", info.writer_waits),
                  u64("writer_pid", info.writer_pid),
                  u64("writer_alive", info.writer_alive ? 1 : 0),
                  u64("last_publish_ns", d.last_publish_ns.load(std::memory_order_relaxed)),
                  u64("lossless_readers", d.lossless_readers.load(std::memory_order_relaxed)),
                  u64("pyramid_levels", d.pyramid_levels),
                  u64("pyramid_factor", d.pyramid_factor),
                  u64("pyramid_entries", d.pyramid_entries)})
    if (!ok) return ok;
  return {};
}

// Copies blocks [first, end) in batches that fit `buffer`, appending their samples to `data`.
core::Result<void> copy_blocks(const core::BlockCopier& copier, std::uint64_t first, std::uint64_t end,
                               std::vector<std::byte>& buffer, std::vector<core::BlockRecord>& records,
                               Appender& data, BlockTable& t, SnapshotStats& stats) {
  const std::uint64_t sample_bytes = copier.sample_bytes();
  std::uint64_t offset = 0;
  for (std::uint64_t s = first; s < end;) {
    const core::BlockRange range = copier.copy_range(s, end, buffer, records);
    for (std::size_t k = 0; k < range.visited; ++k) {
      const core::BlockRecord& r = records[k];
      switch (r.status) {
        case core::BlockStatus::ok: break;
        case core::BlockStatus::overwritten:
        case core::BlockStatus::too_small:  // copy_range never says it
          t.skipped.push_back(SkipRow{r.sequence, static_cast<std::uint8_t>(SkipReason::overwritten)});
          continue;
        case core::BlockStatus::unwritten:
          t.skipped.push_back(SkipRow{r.sequence, static_cast<std::uint8_t>(SkipReason::unwritten)});
          continue;
      }
      t.sequence.push_back(r.sequence);
      t.offset.push_back(offset + r.offset_bytes / sample_bytes);
      t.samples.push_back(r.samples);
      t.flags.push_back(r.flags);
      t.realtime_ns.push_back(r.realtime_ns);
      t.monotonic_ns.push_back(r.monotonic_ns);
      t.first_sample.push_back(r.first_sample);
    }
    s += range.visited;
    if (auto ok = data.append(buffer.data(), range.bytes / sample_bytes); !ok) return ok;
    offset += range.bytes / sample_bytes;
    stats.bytes_copied += range.bytes;
    stats.samples += range.bytes / sample_bytes;
  }
  return {};
}

core::Result<void> write_block_table(hid_t g, const std::string& path, const BlockTable& t) {
  for (auto ok : {write_numbers(g, "block_sequence", path + "/block_sequence", t.sequence),
                  write_numbers(g, "block_offset", path + "/block_offset", t.offset),
                  write_numbers(g, "block_samples", path + "/block_samples", t.samples),
                  write_numbers(g, "block_realtime_ns", path + "/block_realtime_ns", t.realtime_ns),
                  write_numbers(g, "block_monotonic_ns", path + "/block_monotonic_ns", t.monotonic_ns),
                  write_numbers(g, "block_flags", path + "/block_flags", t.flags),
                  write_numbers(g, "block_first_sample", path + "/block_first_sample", t.first_sample)})
    if (!ok) return ok;
  const h5::Type skip_type = skip_row_type();
  h5::Type packed(H5Tcopy(skip_type.get()));
  if (!packed || H5Tpack(packed.get()) < 0) return tl::make_unexpected(h5::error("H5Tpack", path + "/skipped"));
  return write_array(g, "skipped", path + "/skipped", packed.get(), skip_type.get(), t.skipped.data(),
                     t.skipped.size());
}

core::Result<void> write_channel(hid_t channels, const core::Arena& arena, const SnapshotOptions& options,
                                 const Labels& labels, const core::ChannelInfo& info, std::vector<std::byte>& buffer,
                                 SnapshotStats& stats) {
  const std::string path = "/channels/" + link_name(info.name);
  auto copier = core::BlockCopier::open(arena, info.index);  // checks the descriptor against the mapping
  if (!copier) return tl::make_unexpected(core::with_context(copier.error(), path));
  const core::ChannelDesc& d = copier->desc();
  const std::uint64_t payload_bytes = copier->block_bytes();

  auto g = create_group(channels, link_name(info.name), path);
  if (!g) return tl::make_unexpected(g.error());
  if (auto ok = write_descriptor(g->get(), info, d, labels); !ok) return ok;

  const std::uint64_t end = copier->head();  // blocks before it are published
  const std::uint64_t wanted =
      options.blocks == 0 ? d.ring_blocks : std::min<std::uint64_t>(options.blocks, d.ring_blocks);
  const std::uint64_t first = end - std::min(wanted, end);
  const std::uint64_t window_bytes = (end - first) * payload_bytes;
  if (buffer.size() < payload_bytes || buffer.size() < std::min(options.buffer_bytes, window_bytes))
    buffer.resize(std::max(payload_bytes, std::min(options.buffer_bytes, window_bytes)));

  const h5::Type type = h5::sample_type(d.dtype);
  const std::uint64_t window_samples = (end - first) * d.samples_per_block;
  const std::uint64_t chunk = std::max<std::uint64_t>(1, std::min(kChunkBytes / d.sample_bytes, window_samples));
  auto data = Appender::create(g->get(), "data", path + "/data", type.get(), type.get(), 0, chunk);
  if (!data) return tl::make_unexpected(data.error());
  BlockTable table;
  std::vector<core::BlockRecord> records(std::max<std::uint64_t>(1, std::min(end - first, buffer.size() / payload_bytes)));
  if (auto ok = copy_blocks(*copier, first, end, buffer, records, *data, table, stats); !ok) return ok;
  if (auto ok = write_block_table(g->get(), path, table); !ok) return ok;
  const std::uint64_t overwritten =
      static_cast<std::uint64_t>(std::count_if(table.skipped.begin(), table.skipped.end(), [](const SkipRow& r) {
        return r.reason == static_cast<std::uint8_t>(SkipReason::overwritten);
      }));
  stats.blocks += table.sequence.size();
  stats.blocks_overwritten += overwritten;
  for (auto ok : {attr_u64(g->get(), "window_first", first), attr_u64(g->get(), "window_end", end),
                  attr_u64(g->get(), "blocks_copied", table.sequence.size()),
                  attr_u64(g->get(), "blocks_overwritten", overwritten)})
    if (!ok) return ok;
  return {};
}

}  // namespace

core::Result<void> write_channels(hid_t file, const core::Arena& arena, const SnapshotOptions& options,
                                  const Labels& labels, const std::vector<core::ChannelInfo>& channels,
                                  SnapshotStats& stats) {
  auto group = create_group(file, "channels", "/channels");
  if (!group) return tl::make_unexpected(group.error());
  std::vector<std::byte> buffer;  // grown to the largest window needed, at most options.buffer_bytes
  for (const core::ChannelInfo& info : channels) {
    if (auto ok = write_channel(group->get(), arena, options, labels, info, buffer, stats); !ok) return ok;
    ++stats.channels;
  }
  return {};
}

}  // namespace weir::rec::detail

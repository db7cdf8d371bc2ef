// /channels/<name>: each channel's descriptor as attributes and its last blocks, copied oldest
// first (the writer overwrites the oldest first, so that order stays ahead of it) and validated one
// by one against the block's state word, as a ChannelReader would.
#include <algorithm>
#include <cstring>

#include "parts.hpp"
#include "weir/core/arena_layout.hpp"
#include "weir/core/detail/seqlock.hpp"
#include "weir/h5/sample_type.hpp"

namespace weir::rec::detail {

namespace {

constexpr std::uint64_t kChunkBytes = 1ULL << 20;  // HDF5 chunk of a channel's data
constexpr const char* kSkipReasons[] = {"overwritten", "unwritten"};
enum class SkipReason : std::uint8_t { overwritten = 0, unwritten = 1 };

// As core's private channel access: block s lives in slot s & (K - 1); its state says which block it holds.
constexpr std::uint64_t committed_state(std::uint64_t seq) noexcept { return 2 * (seq + 1); }

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
core::Result<void> copy_blocks(const core::Arena& arena, const core::ChannelDesc& d, std::uint64_t first,
                               std::uint64_t end, std::vector<std::byte>& buffer, Appender& data, BlockTable& t,
                               SnapshotStats& stats) {
  const std::uint64_t payload_bytes = std::uint64_t{d.samples_per_block} * d.sample_bytes;
  const std::byte* ring = arena.base() + d.ring_offset;
  std::uint64_t offset = 0;
  for (std::uint64_t s = first; s < end;) {
    std::uint64_t used = 0;
    for (; s < end && used + payload_bytes <= buffer.size(); ++s) {
      const std::byte* slot = ring + (s & (d.ring_blocks - 1)) * d.block_stride;
      const auto& b = *reinterpret_cast<const core::BlockHeader*>(slot);
      const std::uint64_t state = b.state.load(std::memory_order_acquire);  // pairs with the commit store
      if (state != committed_state(s)) {
        const SkipReason why = state > committed_state(s) ? SkipReason::overwritten : SkipReason::unwritten;
        t.skipped.push_back(SkipRow{s, static_cast<std::uint8_t>(why)});
        continue;
      }
      const std::uint32_t samples = std::min(b.samples.load(std::memory_order_relaxed), d.samples_per_block);
      const std::uint32_t flags = b.flags.load(std::memory_order_relaxed);
      const std::uint64_t realtime = b.realtime_ns.load(std::memory_order_relaxed);
      const std::uint64_t monotonic = b.monotonic_ns.load(std::memory_order_relaxed);
      const std::uint64_t first_sample = b.first_sample.load(std::memory_order_relaxed);
      const std::uint64_t bytes = std::uint64_t{samples} * d.sample_bytes;
      core::detail::seqlock_copy_out(buffer.data() + used, slot + sizeof(core::BlockHeader), bytes);
      std::atomic_thread_fence(std::memory_order_acquire);  // the copy happens before the re-check
      if (b.state.load(std::memory_order_relaxed) != state) {
        t.skipped.push_back(SkipRow{s, static_cast<std::uint8_t>(SkipReason::overwritten)});
        continue;
      }
      t.sequence.push_back(s);
      t.offset.push_back(offset + used / d.sample_bytes);
      t.samples.push_back(samples);
      t.flags.push_back(flags);
      t.realtime_ns.push_back(realtime);
      t.monotonic_ns.push_back(monotonic);
      t.first_sample.push_back(first_sample);
      used += bytes;
    }
    if (auto ok = data.append(buffer.data(), used / d.sample_bytes); !ok) return ok;
    offset += used / d.sample_bytes;
    stats.bytes_copied += used;
    stats.samples += used / d.sample_bytes;
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
  const auto& d = reinterpret_cast<const core::ChannelDesc*>(arena.region(core::Region::channels))[info.index];
  const std::string path = "/channels/" + link_name(info.name);
  const std::uint64_t payload_bytes = std::uint64_t{d.samples_per_block} * d.sample_bytes;
  const bool fits = d.sample_bytes == core::dtype_bytes(d.dtype) && d.sample_bytes > 0 &&
                    d.block_stride >= sizeof(core::BlockHeader) + payload_bytes && d.ring_blocks > 0 &&
                    (d.ring_blocks & (d.ring_blocks - 1)) == 0 &&
                    d.ring_offset + std::uint64_t{d.ring_blocks} * d.block_stride <= arena.bytes();
  if (!fits) return core::fail(core::Errc::layout_mismatch, path + ": the channel descriptor is inconsistent");

  auto g = create_group(channels, link_name(info.name), path);
  if (!g) return tl::make_unexpected(g.error());
  if (auto ok = write_descriptor(g->get(), info, d, labels); !ok) return ok;

  const std::uint64_t end = d.head.load(std::memory_order_acquire);  // blocks before it are published
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
  if (auto ok = copy_blocks(arena, d, first, end, buffer, *data, table, stats); !ok) return ok;
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

// The channel table: creating, finding and listing channels (cold path).
#include <bit>
#include <cmath>
#include <cstring>

#include "backing.hpp"
#include "channel_access.hpp"
#include "pid_lock.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/signals.hpp"

namespace weir::core {

namespace {

struct DtypeName {
  Dtype dtype;
  const char* name;
  std::uint32_t bytes;
};
constexpr DtypeName kDtypes[] = {{Dtype::i8, "i8", 1},   {Dtype::u8, "u8", 1},   {Dtype::i16, "i16", 2},
                                 {Dtype::u16, "u16", 2}, {Dtype::i32, "i32", 4}, {Dtype::u32, "u32", 4},
                                 {Dtype::i64, "i64", 8}, {Dtype::f32, "f32", 4}, {Dtype::f64, "f64", 8},
                                 {Dtype::c64, "c64", 8}};


}  // namespace

Result<Dtype> parse_dtype(std::string_view text) {
  for (const auto& d : kDtypes)
    if (text == d.name) return d.dtype;
  return fail(Errc::invalid_argument,
              "unknown dtype '" + std::string(text) + "': use i8 u8 i16 u16 i32 u32 i64 f32 f64 or c64 (complex f32)");
}

const char* dtype_name(Dtype dtype) noexcept {
  for (const auto& d : kDtypes)
    if (d.dtype == dtype) return d.name;
  return "unknown";
}

std::uint32_t dtype_bytes(Dtype dtype) noexcept {
  for (const auto& d : kDtypes)
    if (d.dtype == dtype) return d.bytes;
  return 0;
}

bool dtype_is_integer(Dtype dtype) noexcept {
  return dtype != Dtype::f32 && dtype != Dtype::f64 && dtype != Dtype::c64 && dtype_bytes(dtype) != 0;
}

Result<ConsumerPolicy> parse_policy(std::string_view text) {
  if (text == "lossy") return ConsumerPolicy::lossy;
  if (text == "lossless") return ConsumerPolicy::lossless;
  if (text == "latest") return ConsumerPolicy::latest;
  return fail(Errc::invalid_argument, "unknown consumer policy '" + std::string(text) + "': use lossy, lossless or latest");
}

const char* policy_name(ConsumerPolicy policy) noexcept {
  switch (policy) {
    case ConsumerPolicy::lossy: return "lossy";
    case ConsumerPolicy::lossless: return "lossless";
    case ConsumerPolicy::latest: return "latest";
  }
  return "unknown";
}

namespace {

// Pyramid entries per level: one per kPyramidFactor samples the ring holds, a power of two.
std::uint64_t pyramid_entries_per_level(const ChannelSpec& spec) {
  const std::uint64_t ring_samples = std::uint64_t{spec.samples_per_block} * spec.ring_blocks;
  return std::bit_ceil(std::max<std::uint64_t>(1, ring_samples / kPyramidFactor));
}

}  // namespace

std::uint64_t channel_footprint(const ChannelSpec& spec) noexcept {
  const std::uint64_t block_stride =
      sizeof(BlockHeader) + round_up(std::uint64_t{spec.samples_per_block} * dtype_bytes(spec.dtype), kCacheLine);
  return block_stride * spec.ring_blocks +
         round_up(kPyramidLevels * pyramid_entries_per_level(spec) * sizeof(PyramidEntry), kCacheLine);
}

Result<std::uint32_t> create_channel(const Arena& arena, const ChannelSpec& spec) {
  const std::string what = "channel '" + spec.name + "' in " + arena.location().describe();
  const auto refuse = [&](const std::string& why) { return fail(Errc::invalid_argument, what + ": " + why); };
  if (arena.read_only()) return fail(Errc::permission_denied, what + ": the arena is mapped read-only");
  if (spec.name.empty() || spec.name.size() >= sizeof(ChannelDesc::name)) return refuse("name must be 1 to 63 bytes");
  const std::uint32_t sample_bytes = dtype_bytes(spec.dtype);
  if (sample_bytes == 0) return refuse("unknown dtype");
  if (!std::isfinite(spec.rate_hz) || spec.rate_hz <= 0)
    return refuse("sample rate must be a positive number of Hz, not " + std::to_string(spec.rate_hz));
  if (spec.samples_per_block == 0 || spec.samples_per_block > kMaxSamplesPerBlock)
    return refuse("samples per block must be 1 to " + std::to_string(kMaxSamplesPerBlock));
  if (spec.ring_blocks < 2 || spec.ring_blocks > kMaxRingBlocks || !std::has_single_bit(spec.ring_blocks))
    return refuse("ring blocks must be a power of two from 2 to " + std::to_string(kMaxRingBlocks) + ", not " + std::to_string(spec.ring_blocks));
  if (spec.units.size() >= sizeof(ChannelDesc::units)) return refuse("units must be shorter than 32 bytes");
  if (spec.wait_timeout_ns < 0) return refuse("writer wait timeout must not be negative");
  const FrameShape& frame = spec.frame;
  if (frame.framed() || frame.frame_elements != 0) {
    if (frame.frames_per_block == 0 || frame.frame_elements == 0 ||
        std::uint64_t{frame.frames_per_block} * frame.frame_elements != spec.samples_per_block)
      return refuse("frame shape " + std::to_string(frame.frames_per_block) + " x " + std::to_string(frame.frame_elements) +
                    " does not fill a block of " + std::to_string(spec.samples_per_block) + " samples");
    if (frame.axis.name.size() >= sizeof(ChannelDesc::axis_name))
      return refuse("frame axis name must be shorter than 32 bytes");
    if (frame.axis.units.size() >= sizeof(ChannelDesc::axis_units))
      return refuse("frame axis units must be shorter than 32 bytes");
    if (frame.axis.values_key.size() >= sizeof(ChannelDesc::axis_values_key))
      return refuse("frame axis values key must be shorter than 64 bytes");
    if (!std::isfinite(frame.axis.start) || !std::isfinite(frame.axis.step))
      return refuse("frame axis start and step must be finite numbers");
  }

  GroupTable groups(arena);
  std::uint64_t label_ids = 0, labels = label_mask("chan:" + spec.name);  // its own name, for channel subscriptions
  for (const auto& label : spec.labels) {
    auto id = groups.label_id(label);
    if (!id) return tl::make_unexpected(with_context(id.error(), what));
    label_ids |= std::uint64_t{1} << *id;
    labels |= label_mask(label);
  }

  const std::uint64_t block_stride =
      sizeof(BlockHeader) + round_up(std::uint64_t{spec.samples_per_block} * sample_bytes, kCacheLine);
  const std::uint64_t ring_bytes = block_stride * spec.ring_blocks;
  const std::uint64_t pyramid_bytes = channel_footprint(spec) - ring_bytes;
  const std::uint64_t entries = pyramid_entries_per_level(spec);

  ArenaHeader& h = arena.header();
  detail::PidLock lock(h.channels_lock);
  const std::uint32_t capacity = arena.geometry().channel_capacity;
  std::uint32_t free_index = capacity;
  for (std::uint32_t i = 0; i < capacity; ++i) {
    const ChannelDesc* d = detail::channel_desc(arena, i);
    const auto state = static_cast<ChannelState>(d->state.load(std::memory_order_acquire));
    if (state == ChannelState::ready && spec.name == d->name) return refuse("a channel of that name already exists");
    if (state != ChannelState::ready && free_index == capacity) free_index = i;  // creating: its creator died
  }
  if (free_index == capacity) return refuse("the channel table is full (" + std::to_string(capacity) + " channels)");
  const std::uint64_t used = h.channel_data_used.load(std::memory_order_relaxed);
  const std::uint64_t pool = arena.geometry().channel_data_bytes;
  if (ring_bytes + pyramid_bytes > pool - used)
    return refuse("its ring and pyramid need " + std::to_string(ring_bytes + pyramid_bytes) + " bytes but the arena's channel pool has " +
                  std::to_string(pool - used) + " of " + std::to_string(pool) + " bytes free; create the arena with a bigger pool (weir create "
                  "--pool MIB, or pool_mib in a pipeline)");

  ChannelDesc* d = detail::channel_desc(arena, free_index);
  d->state.store(static_cast<std::uint32_t>(ChannelState::creating), std::memory_order_relaxed);
  const std::uint64_t base = static_cast<std::uint64_t>(detail::channel_pool(arena) - arena.base()) + used;
  std::memset(arena.base() + base, 0, ring_bytes + pyramid_bytes);  // a reused pool range reads as never written
  d->head.store(0, std::memory_order_relaxed);
  d->writer_pid.store(0, std::memory_order_relaxed);
  d->samples_written.store(0, std::memory_order_relaxed);
  d->dropped_at_source.store(0, std::memory_order_relaxed);
  d->writer_waits.store(0, std::memory_order_relaxed);
  d->lossless_readers.store(0, std::memory_order_relaxed);
  d->lossless_epoch.store(0, std::memory_order_relaxed);
  d->group_bits.store(0, std::memory_order_relaxed);
  d->groups_seen.store(~std::uint64_t{0}, std::memory_order_relaxed);  // never a real version: refresh first
  d->last_publish_ns.store(0, std::memory_order_relaxed);
  std::memset(d->name, 0, sizeof(d->name));
  std::memcpy(d->name, spec.name.data(), spec.name.size());
  d->dtype = spec.dtype;
  d->sample_bytes = sample_bytes;
  d->samples_per_block = spec.samples_per_block;
  d->ring_blocks = spec.ring_blocks;
  d->block_stride = block_stride;
  d->ring_offset = base;
  d->rate_bits = std::bit_cast<std::uint64_t>(spec.rate_hz);
  d->labels = labels;
  d->label_ids = label_ids;
  d->full_policy = spec.full_policy;
  d->pyramid_levels = kPyramidLevels;
  d->wait_timeout_ns = spec.wait_timeout_ns;
  d->pyramid_offset = base + ring_bytes;
  d->pyramid_entries = static_cast<std::uint32_t>(entries);
  d->pyramid_factor = kPyramidFactor;
  std::memset(d->units, 0, sizeof(d->units));
  std::memcpy(d->units, spec.units.data(), spec.units.size());
  d->frames_per_block = frame.frames_per_block;
  d->frame_elements = frame.frame_elements;
  d->axis_start_bits = std::bit_cast<std::uint64_t>(frame.framed() ? frame.axis.start : 0.0);
  d->axis_step_bits = std::bit_cast<std::uint64_t>(frame.framed() ? frame.axis.step : 0.0);
  std::memset(d->axis_name, 0, sizeof(d->axis_name));
  std::memset(d->axis_units, 0, sizeof(d->axis_units));
  std::memset(d->axis_values_key, 0, sizeof(d->axis_values_key));
  if (frame.framed()) {
    std::memcpy(d->axis_name, frame.axis.name.data(), frame.axis.name.size());
    std::memcpy(d->axis_units, frame.axis.units.data(), frame.axis.units.size());
    std::memcpy(d->axis_values_key, frame.axis.values_key.data(), frame.axis.values_key.size());
  }
  d->created_ns = static_cast<std::uint64_t>(core::realtime_ns());
  h.channel_data_used.store(used + ring_bytes + pyramid_bytes, std::memory_order_relaxed);
  d->state.store(static_cast<std::uint32_t>(ChannelState::ready), std::memory_order_release);  // every field first
  return free_index;
}

Result<std::uint32_t> find_channel(const Arena& arena, std::string_view name) {
  for (std::uint32_t i = 0; i < arena.geometry().channel_capacity; ++i) {
    const ChannelDesc* d = detail::channel_desc(arena, i);
    if (static_cast<ChannelState>(d->state.load(std::memory_order_acquire)) == ChannelState::ready && name == d->name)
      return i;
  }
  return fail(Errc::not_found, "no channel '" + std::string(name) + "' in " + arena.location().describe());
}

FrameShape frame_shape(const ChannelDesc& d) {
  FrameShape f;
  if (d.frames_per_block == 0) return f;
  f.frames_per_block = d.frames_per_block;
  f.frame_elements = d.frame_elements;
  f.axis.name = std::string(d.axis_name, strnlen(d.axis_name, sizeof(d.axis_name)));
  f.axis.units = std::string(d.axis_units, strnlen(d.axis_units, sizeof(d.axis_units)));
  f.axis.start = std::bit_cast<double>(d.axis_start_bits);
  f.axis.step = std::bit_cast<double>(d.axis_step_bits);
  f.axis.values_key = std::string(d.axis_values_key, strnlen(d.axis_values_key, sizeof(d.axis_values_key)));
  return f;
}

std::vector<ChannelInfo> list_channels(const Arena& arena) {
  std::vector<ChannelInfo> out;
  const ConsumerRow* rows = detail::consumer_rows(arena);
  for (std::uint32_t i = 0; i < arena.geometry().channel_capacity; ++i) {
    const ChannelDesc* d = detail::channel_desc(arena, i);
    if (static_cast<ChannelState>(d->state.load(std::memory_order_acquire)) != ChannelState::ready) continue;
    ChannelInfo c;
    c.index = i;
    c.name = d->name;
    c.units = d->units;
    c.dtype = d->dtype;
    c.rate_hz = std::bit_cast<double>(d->rate_bits);
    c.samples_per_block = d->samples_per_block;
    c.ring_blocks = d->ring_blocks;
    c.blocks_written = d->head.load(std::memory_order_acquire);
    c.samples_written = d->samples_written.load(std::memory_order_relaxed);
    c.dropped_at_source = d->dropped_at_source.load(std::memory_order_relaxed);
    c.writer_waits = d->writer_waits.load(std::memory_order_relaxed);
    c.writer_pid = d->writer_pid.load(std::memory_order_relaxed);
    c.writer_alive = pid_alive(c.writer_pid);
    c.frame = frame_shape(*d);
    for (std::uint32_t r = 0; r < arena.geometry().consumer_capacity; ++r) {
      const ConsumerRow& row = rows[r];
      if (row.active.load(std::memory_order_acquire) == 0 || row.channel.load(std::memory_order_relaxed) != i) continue;
      ConsumerInfo ci;
      ci.row = r;
      ci.pid = row.pid.load(std::memory_order_relaxed);
      ci.alive = pid_alive(ci.pid);
      ci.policy = static_cast<ConsumerPolicy>(row.policy.load(std::memory_order_relaxed));
      ci.name = std::string(row.name, strnlen(row.name, sizeof(row.name)));
      ci.cursor = row.cursor.load(std::memory_order_relaxed);
      ci.blocks_read = row.blocks_read.load(std::memory_order_relaxed);
      ci.samples_read = row.samples_read.load(std::memory_order_relaxed);
      ci.blocks_lost = row.blocks_lost.load(std::memory_order_relaxed);
      ci.lag = c.blocks_written > ci.cursor ? c.blocks_written - ci.cursor : 0;
      ci.kind = std::string(row.kind, strnlen(row.kind, sizeof(row.kind)));
      ci.blocks_out = row.blocks_out.load(std::memory_order_relaxed);
      ci.blocks_skipped = row.blocks_skipped.load(std::memory_order_relaxed);
      ci.errors = row.errors.load(std::memory_order_relaxed);
      ci.proc_p50_ns = row.proc_p50_ns.load(std::memory_order_relaxed);
      ci.proc_p99_ns = row.proc_p99_ns.load(std::memory_order_relaxed);
      ci.bytes_out = row.bytes_out.load(std::memory_order_relaxed);
      c.consumers.push_back(std::move(ci));
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace weir::core

// Layout planning and header validation: pure functions over bytes, no system calls.
#include <cstring>
#include <string>

#include "weir/core/arena.hpp"

namespace weir::core {

namespace {


Result<void> check_range(const char* field, std::uint64_t v, std::uint64_t lo, std::uint64_t hi) {
  if (v < lo || v > hi)
    return fail(Errc::invalid_argument, std::string(field) + " = " + std::to_string(v) + " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
  return {};
}


}  // namespace

std::uint64_t header_checksum(const ArenaHeader& header) noexcept {
  const auto* bytes = reinterpret_cast<const unsigned char*>(&header);
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a 64
  for (std::size_t i = kChecksumBegin; i < kChecksumEnd; ++i) {
    h ^= bytes[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

Result<void> plan_layout(const ArenaOptions& o, ArenaHeader& out) {
  if (auto r = check_range("slots", o.slot_count, 1, kMaxSlotCount); !r) return r;
  if (auto r = check_range("key_bytes", o.key_bytes, 1, kMaxKeyBytes); !r) return r;
  if (auto r = check_range("value_bytes", o.value_bytes, sizeof(std::uint64_t), kMaxValueBytes); !r) return r;
  if (auto r = check_range("max_probe", o.max_probe, 1, kMaxSlotCount); !r) return r;
  if (auto r = check_range("channels", o.channel_capacity, 0, kMaxChannelCapacity); !r) return r;
  if (auto r = check_range("channel_data_bytes", o.channel_data_bytes, 0, kMaxArenaBytes); !r) return r;
  if (auto r = check_range("consumers", o.consumer_capacity, 0, kMaxConsumerCapacity); !r) return r;
  if (auto r = check_range("group_log_entries", o.group_log_entries, 1, kMaxGroupLogEntries); !r) return r;
  if ((o.group_log_entries & (o.group_log_entries - 1)) != 0)
    return fail(Errc::invalid_argument, "group_log_entries = " + std::to_string(o.group_log_entries) + " is not a power of two");
  if (auto r = check_range("vector_dim", o.vector_dim, 0, kMaxVectorDim); !r) return r;
  if ((o.mode & ~0777U) != 0 || (o.mode & 0600U) != 0600U)
    return fail(Errc::invalid_argument, "mode " + std::to_string(o.mode) + " must be octal permission bits including owner rw (0600)");

  Geometry& g = out.geometry;
  g = Geometry{};
  g.slot_count = o.slot_count;
  g.key_bytes = o.key_bytes;
  g.value_bytes = o.value_bytes;
  g.slot_stride = slot_stride_for(o.key_bytes, o.value_bytes);
  g.max_probe = o.max_probe < o.slot_count ? o.max_probe : o.slot_count;
  g.group_count = kGroupCount;
  g.channel_capacity = o.channel_capacity;
  g.consumer_capacity = o.consumer_capacity;
  g.vector_count = o.vector_dim == 0 ? 0 : o.slot_count;  // row i belongs to slot i
  g.vector_dim = o.vector_dim;
  g.attach_capacity = kAttachCapacity;
  g.channel_data_bytes = o.channel_data_bytes;
  g.group_log_entries = o.group_log_entries;

  // Every term is bounded above, so the u64 sums cannot overflow before the size check.
  const std::uint64_t sizes[] = {
      round_up(std::uint64_t{g.slot_count} * sizeof(std::uint64_t), kCacheLine),
      std::uint64_t{g.slot_count} * g.slot_stride,
      logs_offset_in_groups() + std::uint64_t{kGroupCount} * g.group_log_entries * sizeof(LogEntry),
      std::uint64_t{g.channel_capacity} * kChannelDescBytes + round_up(g.channel_data_bytes, kCacheLine),
      std::uint64_t{g.vector_count} * vector_row_stride(g.vector_dim),
      std::uint64_t{g.consumer_capacity} * sizeof(ConsumerRow),
      round_up(std::uint64_t{g.attach_capacity} * sizeof(AttachEntry), kCacheLine),
      std::uint64_t{kWatcherCapacity} * sizeof(WatcherRow),
  };
  static_assert(std::size(sizes) == static_cast<std::size_t>(Region::count));
  std::memset(out.regions, 0, sizeof(out.regions));
  std::uint64_t cursor = kHeaderBytes;
  for (std::size_t r = 0; r < std::size(sizes); ++r) {
    out.regions[r].offset = cursor;
    out.regions[r].bytes = sizes[r];
    cursor += sizes[r];
  }
  out.arena_bytes = round_up(cursor, kHeaderBytes);
  if (out.arena_bytes > kMaxArenaBytes)
    return fail(Errc::invalid_argument, "geometry needs " + std::to_string(out.arena_bytes) + " bytes, more than the " +
                                            std::to_string(kMaxArenaBytes) + "-byte limit");
  out.layout_version = kArenaLayoutVersion;
  out.header_bytes = kHeaderBytes;
  out.mode = o.mode;
  return {};
}

ArenaOptions options_of(const ArenaHeader& h) {
  const Geometry& g = h.geometry;
  ArenaOptions o;
  o.slot_count = g.slot_count;
  o.key_bytes = g.key_bytes;
  o.value_bytes = g.value_bytes;
  o.max_probe = g.max_probe;
  o.channel_capacity = g.channel_capacity;
  o.channel_data_bytes = g.channel_data_bytes;
  o.consumer_capacity = g.consumer_capacity;
  o.vector_dim = g.vector_dim;
  o.group_log_entries = g.group_log_entries;
  o.mode = h.mode;
  return o;
}

Result<void> validate_header(const std::byte* base, std::uint64_t mapped_bytes, const std::string& what) {
  const auto refuse = [&](const std::string& why) { return fail(Errc::layout_mismatch, what + ": " + why); };
  if (mapped_bytes < kHeaderBytes)
    return refuse("truncated: " + std::to_string(mapped_bytes) + " bytes, smaller than the " + std::to_string(kHeaderBytes) + "-byte header");
  const auto& h = *reinterpret_cast<const ArenaHeader*>(base);
  const std::uint32_t magic = h.ready_magic.load(std::memory_order_acquire);  // pairs with the creator's release
  if (magic == 0) return fail(Errc::not_ready, what + ": header not published (creator unfinished or died)");
  if (magic != kArenaMagic) return refuse("not a weir arena (magic " + std::to_string(magic) + ")");
  if (h.layout_version > kArenaLayoutVersion)
    return refuse("layout version " + std::to_string(h.layout_version) + " is newer than this build's " + std::to_string(kArenaLayoutVersion));
  if (h.layout_version != kArenaLayoutVersion)
    return refuse("layout version " + std::to_string(h.layout_version) + " is not this build's " + std::to_string(kArenaLayoutVersion));
  if (h.header_checksum != header_checksum(h)) return refuse("header checksum mismatch: the header is corrupted");
  if (h.header_bytes != kHeaderBytes) return refuse("header size " + std::to_string(h.header_bytes) + " is not " + std::to_string(kHeaderBytes));
  if (std::memchr(h.name, 0, sizeof(h.name)) == nullptr) return refuse("name is not terminated");
  if (h.numa_node < -1) return refuse("NUMA node field " + std::to_string(h.numa_node) + " is invalid");
  if ((h.create_flags & ~kCreatePrefaulted) != 0) return refuse("unknown create flags " + std::to_string(h.create_flags));

  const Geometry& g = h.geometry;
  ArenaHeader planned{};
  if (auto r = plan_layout(options_of(h), planned); !r) return refuse("geometry invalid: " + r.error().what);
  if (std::memcmp(&planned.geometry, &g, sizeof(Geometry)) != 0) return refuse("geometry fields are inconsistent");
  if (std::memcmp(planned.regions, h.regions, sizeof(h.regions)) != 0)
    return refuse("region table does not match the geometry");
  if (planned.arena_bytes != h.arena_bytes)
    return refuse("size field " + std::to_string(h.arena_bytes) + " does not match the geometry's " + std::to_string(planned.arena_bytes));
  if (h.arena_bytes > mapped_bytes)
    return refuse("truncated: header says " + std::to_string(h.arena_bytes) + " bytes, the mapping has " + std::to_string(mapped_bytes));
  return {};
}

}  // namespace weir::core

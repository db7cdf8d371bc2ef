// /arena, /labels, /groups and /consumers: the arena's header and its small tables.
#include <array>
#include <cstdio>
#include <cstring>

#include "parts.hpp"
#include "weir/core/arena_layout.hpp"
#include "weir/core/label_dictionary.hpp"
#include "weir/core/signals.hpp"

namespace weir::rec::detail {

namespace {

constexpr const char* kRegionNames[] = {"index",   "slots",     "groups", "channels",
                                        "vectors", "consumers", "attach", "watchers"};
constexpr const char* kGroupKinds[] = {"free", "label", "key", "channel"};
constexpr const char* kPolicies[] = {"lossy", "lossless", "latest"};
static_assert(std::size(kRegionNames) == static_cast<std::size_t>(core::Region::count));

struct RegionRow {
  const char* name;
  std::uint64_t offset;
  std::uint64_t bytes;
};

struct LabelRow {
  std::uint32_t id;
  const char* name;
  std::uint64_t mask;
};

struct GroupRow {
  std::uint32_t index;
  std::uint8_t kind;
  const char* name;
  std::uint64_t mask;
  std::uint64_t pulses;
  std::uint32_t subscribers;
  std::uint64_t waiters;
};

struct ConsumerRowOut {
  std::uint32_t row;
  std::uint32_t pid;
  std::uint8_t alive;
  const char* channel;
  std::uint32_t channel_index;
  std::uint8_t policy;
  const char* name;
  const char* kind;
  std::uint64_t cursor, lag, blocks_read, samples_read, blocks_lost, heartbeat_ns, registered_ns;
  std::uint64_t blocks_out, blocks_skipped, errors, proc_p50_ns, proc_p99_ns, bytes_out;
};

// Writes `rows` as a compound table whose memory type is `type` (stored packed).
template <class Row>
core::Result<void> write_table(hid_t parent, const std::string& name, const std::string& path, const h5::Type& type,
                               const std::vector<Row>& rows) {
  h5::Type packed(H5Tcopy(type.get()));
  if (!packed || H5Tpack(packed.get()) < 0) return tl::make_unexpected(h5::error("H5Tpack", path));
  return write_array(parent, name, path, packed.get(), type.get(), rows.data(), rows.size());
}

#define WEIR_FIELD(T, field, type) H5Tinsert(t.get(), #field, HOFFSET(T, field), type)

h5::Type region_type() {
  const h5::Type text = text_type();
  h5::Type t(H5Tcreate(H5T_COMPOUND, sizeof(RegionRow)));
  WEIR_FIELD(RegionRow, name, text.get());
  WEIR_FIELD(RegionRow, offset, H5T_NATIVE_UINT64);
  WEIR_FIELD(RegionRow, bytes, H5T_NATIVE_UINT64);
  return t;
}

h5::Type label_type() {
  const h5::Type text = text_type();
  h5::Type t(H5Tcreate(H5T_COMPOUND, sizeof(LabelRow)));
  WEIR_FIELD(LabelRow, id, H5T_NATIVE_UINT32);
  WEIR_FIELD(LabelRow, name, text.get());
  WEIR_FIELD(LabelRow, mask, H5T_NATIVE_UINT64);
  return t;
}

h5::Type group_type() {
  const h5::Type text = text_type(), kind = enum_type(kGroupKinds);
  h5::Type t(H5Tcreate(H5T_COMPOUND, sizeof(GroupRow)));
  WEIR_FIELD(GroupRow, index, H5T_NATIVE_UINT32);
  WEIR_FIELD(GroupRow, kind, kind.get());
  WEIR_FIELD(GroupRow, name, text.get());
  WEIR_FIELD(GroupRow, mask, H5T_NATIVE_UINT64);
  WEIR_FIELD(GroupRow, pulses, H5T_NATIVE_UINT64);
  WEIR_FIELD(GroupRow, subscribers, H5T_NATIVE_UINT32);
  WEIR_FIELD(GroupRow, waiters, H5T_NATIVE_UINT64);
  return t;
}

h5::Type consumer_type() {
  const h5::Type text = text_type(), policy = enum_type(kPolicies);
  h5::Type t(H5Tcreate(H5T_COMPOUND, sizeof(ConsumerRowOut)));
  WEIR_FIELD(ConsumerRowOut, row, H5T_NATIVE_UINT32);
  WEIR_FIELD(ConsumerRowOut, pid, H5T_NATIVE_UINT32);
  WEIR_FIELD(ConsumerRowOut, alive, H5T_NATIVE_UINT8);
  WEIR_FIELD(ConsumerRowOut, channel, text.get());
  WEIR_FIELD(ConsumerRowOut, channel_index, H5T_NATIVE_UINT32);
  WEIR_FIELD(ConsumerRowOut, policy, policy.get());
  WEIR_FIELD(ConsumerRowOut, name, text.get());
  WEIR_FIELD(ConsumerRowOut, kind, text.get());
  for (const auto& [name, offset] : {std::pair{"cursor", HOFFSET(ConsumerRowOut, cursor)},
                                     {"lag", HOFFSET(ConsumerRowOut, lag)},
                                     {"blocks_read", HOFFSET(ConsumerRowOut, blocks_read)},
                                     {"samples_read", HOFFSET(ConsumerRowOut, samples_read)},
                                     {"blocks_lost", HOFFSET(ConsumerRowOut, blocks_lost)},
                                     {"heartbeat_ns", HOFFSET(ConsumerRowOut, heartbeat_ns)},
                                     {"registered_ns", HOFFSET(ConsumerRowOut, registered_ns)},
                                     {"blocks_out", HOFFSET(ConsumerRowOut, blocks_out)},
                                     {"blocks_skipped", HOFFSET(ConsumerRowOut, blocks_skipped)},
                                     {"errors", HOFFSET(ConsumerRowOut, errors)},
                                     {"proc_p50_ns", HOFFSET(ConsumerRowOut, proc_p50_ns)},
                                     {"proc_p99_ns", HOFFSET(ConsumerRowOut, proc_p99_ns)},
                                     {"bytes_out", HOFFSET(ConsumerRowOut, bytes_out)}})
    H5Tinsert(t.get(), name, offset, H5T_NATIVE_UINT64);
  return t;
}

#undef WEIR_FIELD

}  // namespace

std::string Labels::names_of(std::uint64_t ids) const {
  std::string out;
  for (std::uint32_t i = 0; i < core::kLabelCapacity; ++i) {
    if (((ids >> i) & 1U) == 0 || names[i].empty()) continue;
    if (!out.empty()) out += ',';
    out += names[i];
  }
  return out;
}

Labels read_labels(const core::Arena& arena) {
  Labels out;
  core::LabelDictionary(arena).for_each([&](const core::LabelInfo& label) {
    out.names[label.id].assign(label.name);
    out.masks[label.id] = label.mask;
  });
  return out;
}

std::string link_name(const std::string& name) {
  std::string out;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '%' || c == '/' || (i == 0 && c == '.')) {
      std::array<char, 4> hex{};
      std::snprintf(hex.data(), hex.size(), "%%%02X", static_cast<unsigned char>(c));
      out += hex.data();
    } else {
      out += c;
    }
  }
  return out;
}

core::Result<void> write_arena(hid_t file, const core::Arena& arena) {
  auto group = create_group(file, "arena", "/arena");
  if (!group) return tl::make_unexpected(group.error());
  const hid_t g = group->get();
  const core::ArenaHeader& h = arena.header();
  const core::Geometry& geo = h.geometry;
  const auto u64 = [&](const char* name, std::uint64_t v) { return attr_u64(g, name, v); };
  const auto relaxed = [](const std::atomic<std::uint64_t>& v) { return v.load(std::memory_order_relaxed); };
  for (auto ok : {attr_text(g, "name", std::string(h.name, strnlen(h.name, sizeof(h.name)))),
                  attr_text(g, "location", arena.location().describe()),
                  u64("layout_version", h.layout_version),
                  u64("header_bytes", h.header_bytes),
                  u64("arena_bytes", h.arena_bytes),
                  u64("creator_pid", h.creator_pid),
                  u64("mode", h.mode),
                  u64("created_ns", h.created_ns),
                  attr_text(g, "created_time", iso8601_ns(h.created_ns)),
                  attr_i64(g, "numa_node", h.numa_node),
                  u64("create_flags", h.create_flags),
                  u64("header_checksum", h.header_checksum),
                  u64("generation", relaxed(h.generation)),
                  u64("recovered_slots", relaxed(h.recovered_slots)),
                  u64("attach_overflow", relaxed(h.attach_overflow)),
                  u64("groups_version", relaxed(h.groups_version)),
                  u64("wake_syscalls", relaxed(h.wake_syscalls)),
                  u64("channel_data_used", relaxed(h.channel_data_used)),
                  u64("slot_count", geo.slot_count),
                  u64("key_bytes", geo.key_bytes),
                  u64("value_bytes", geo.value_bytes),
                  u64("slot_stride", geo.slot_stride),
                  u64("max_probe", geo.max_probe),
                  u64("group_count", geo.group_count),
                  u64("channel_capacity", geo.channel_capacity),
                  u64("consumer_capacity", geo.consumer_capacity),
                  u64("vector_count", geo.vector_count),
                  u64("vector_dim", geo.vector_dim),
                  u64("attach_capacity", geo.attach_capacity),
                  u64("group_log_entries", geo.group_log_entries),
                  u64("channel_data_bytes", geo.channel_data_bytes)})
    if (!ok) return ok;
  std::vector<RegionRow> regions;
  for (std::uint32_t r = 0; r < static_cast<std::uint32_t>(core::Region::count); ++r)
    regions.push_back(RegionRow{kRegionNames[r], h.regions[r].offset, h.regions[r].bytes});
  if (auto ok = write_table(g, "regions", "/arena/regions", region_type(), regions); !ok) return ok;
  const std::vector<std::uint32_t> attached = core::attached_pids(arena);
  return attr_u32_array(g, "attached_pids", attached);
}

core::Result<void> write_labels(hid_t file, const Labels& labels) {
  std::vector<LabelRow> rows;
  for (std::uint32_t i = 0; i < core::kLabelCapacity; ++i)
    if (!labels.names[i].empty()) rows.push_back(LabelRow{i, labels.names[i].c_str(), labels.masks[i]});
  return write_table(file, "labels", "/labels", label_type(), rows);
}

core::Result<void> write_groups(hid_t file, const core::Arena& arena, SnapshotStats& stats) {
  const std::vector<core::GroupInfo> groups = core::GroupTable(arena).list();
  std::vector<GroupRow> rows;
  for (const core::GroupInfo& g : groups) {
    if (g.kind == core::GroupKind::free) continue;
    rows.push_back(GroupRow{g.index, static_cast<std::uint8_t>(g.kind), g.name.c_str(), g.mask, g.pulses, g.subscribers,
                            g.waiters});
  }
  stats.groups = rows.size();
  return write_table(file, "groups", "/groups", group_type(), rows);
}

core::Result<void> write_consumers(hid_t file, const core::Arena& arena, const std::vector<core::ChannelInfo>& channels,
                                   SnapshotStats& stats) {
  const auto* table = reinterpret_cast<const core::ConsumerRow*>(arena.region(core::Region::consumers));
  std::vector<ConsumerRowOut> rows;
  for (const core::ChannelInfo& ch : channels) {
    for (const core::ConsumerInfo& c : ch.consumers) {
      const core::ConsumerRow& raw = table[c.row];
      rows.push_back(ConsumerRowOut{c.row,
                                    c.pid,
                                    static_cast<std::uint8_t>(c.alive ? 1 : 0),
                                    ch.name.c_str(),
                                    ch.index,
                                    static_cast<std::uint8_t>(c.policy),
                                    c.name.c_str(),
                                    c.kind.c_str(),
                                    c.cursor,
                                    c.lag,
                                    c.blocks_read,
                                    c.samples_read,
                                    c.blocks_lost,
                                    raw.heartbeat_ns.load(std::memory_order_relaxed),
                                    raw.registered_ns.load(std::memory_order_relaxed),
                                    c.blocks_out,
                                    c.blocks_skipped,
                                    c.errors,
                                    c.proc_p50_ns,
                                    c.proc_p99_ns,
                                    c.bytes_out});
    }
  }
  stats.consumers = rows.size();
  return write_table(file, "consumers", "/consumers", consumer_type(), rows);
}

}  // namespace weir::rec::detail

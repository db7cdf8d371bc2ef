#pragma once
// The shared-memory layout of an arena, declared once. Offsets are from the arena base.
// Any change below bumps kArenaLayoutVersion and the golden test in tests/core/arena_layout_test.cpp.
//
//   offset 0          ArenaHeader (one page: identity, geometry, region table, shared counters)
//   regions[index]    slot_count x IndexEntry (u64: state | 32-bit hash tag), the probe table
//   regions[slots]    slot_count x slot_stride: SlotHeader, key bytes, value bytes
//   regions[groups]   kGroupCount x SignalGroup, kLabelCapacity x LabelEntry,
//                     kGroupCount x group_log_entries x LogEntry (each group's change log)
//   regions[channels] channel descriptors + rings    (reserved)
//   regions[vectors]  vector_count x (VectorRowHeader + vector_dim floats, 64-aligned); row i is slot i's
//   regions[consumers] consumer_capacity x kConsumerBytes (reserved)
//   regions[attach]   attach_capacity x AttachEntry  (who has the arena open)
//   regions[watchers] kWatcherCapacity x WatcherRow  (processes waiting on signal groups)
//
// A slot (slot_stride bytes, a multiple of 64):
//   +0   SlotHeader (128 B)  line 0: epoch, meta, generation, pins, labels, groups; line 1: label ids
//   +128 key bytes           key_bytes rounded up to 64
//   +..  value bytes         value_bytes rounded up to 64; integers live in the first 8 bytes
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "weir/core/limits.hpp"

namespace weir::core {

inline constexpr std::uint32_t kArenaMagic = 0x5249'4557U;  // "WEIR" little-endian
inline constexpr std::uint16_t kArenaLayoutVersion = 2;     // bump on ANY change in this file

enum class Region : std::uint32_t { index = 0, slots, groups, channels, vectors, consumers, attach, watchers, count };
inline constexpr std::uint32_t kRegionSlots = 8;  // entries in the region table; the spare ones are zero

struct RegionDesc {
  std::uint64_t offset;  // from the arena base, 64-aligned
  std::uint64_t bytes;   // 64-aligned
};

struct Geometry {                       //  off size (within Geometry)
  std::uint32_t slot_count;             //   0   4  KV slots (and index entries)
  std::uint32_t key_bytes;              //   4   4  longest key
  std::uint32_t value_bytes;            //   8   4  largest value
  std::uint32_t slot_stride;            //  12   4  bytes per slot, derived
  std::uint32_t max_probe;              //  16   4  linear-probe window
  std::uint32_t group_count;            //  20   4  signal groups
  std::uint32_t channel_capacity;       //  24   4  channel descriptors
  std::uint32_t consumer_capacity;      //  28   4  consumer rows
  std::uint32_t vector_count;           //  32   4  vectors
  std::uint32_t vector_dim;             //  36   4  float32 per vector
  std::uint32_t attach_capacity;        //  40   4  attach-table rows
  std::uint32_t group_log_entries;      //  44   4  change-log entries per signal group, a power of two
  std::uint64_t channel_data_bytes;     //  48   8  ring bytes for all channels
  std::uint64_t reserved1;              //  56   8  zero
};
static_assert(sizeof(Geometry) == 64 && std::is_standard_layout_v<Geometry>);
static_assert(offsetof(Geometry, attach_capacity) == 40 && offsetof(Geometry, channel_data_bytes) == 48);

// At offset 0. The creator fills everything, computes header_checksum, then stores ready_magic last.
struct ArenaHeader {                                 //  off  size
  std::atomic<std::uint32_t> ready_magic;            //    0    4  0 until the creator is done; release
  std::uint16_t layout_version;                      //    4    2
  std::uint16_t header_bytes;                        //    6    2  kHeaderBytes
  std::uint64_t arena_bytes;                         //    8    8  whole mapping
  std::uint32_t creator_pid;                         //   16    4
  std::uint32_t mode;                                //   20    4  permission bits asked at create
  std::uint64_t created_ns;                          //   24    8  CLOCK_REALTIME
  std::int32_t numa_node;                            //   32    4  node the pages are bound to, -1 none
  std::uint32_t create_flags;                        //   36    4  kCreatePrefaulted
  std::uint8_t reserved0[24];                        //   40   24  zero
  Geometry geometry;                                 //   64   64
  RegionDesc regions[kRegionSlots];                  //  128  128
  char name[64];                                     //  256   64  zero-terminated
  std::uint64_t header_checksum;                     //  320    8  FNV-1a of bytes [4, 320)
  std::uint8_t reserved1[56];                        //  328   56  zero
  // Mutable, shared counters: each on its own line, written by any process.
  alignas(kCacheLine) std::atomic<std::uint64_t> generation;      //  384  bumped by restore
  alignas(kCacheLine) std::atomic<std::uint64_t> recovered_slots; //  448  stuck slots recovered
  alignas(kCacheLine) std::atomic<std::uint64_t> attach_overflow; //  512  attaches not tracked: table full
  alignas(kCacheLine) std::atomic<std::uint64_t> groups_version;  //  576  bumped on any group table change
  alignas(kCacheLine) std::atomic<std::uint64_t> groups_lock;     //  640  pid holding the group table, 0 free
  alignas(kCacheLine) std::atomic<std::uint64_t> wake_syscalls;   //  704  FUTEX_WAKE calls made by publishers
  std::uint8_t reserved2[kHeaderBytes - 768];                     //  768  zero
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free && std::atomic<std::uint32_t>::is_always_lock_free);
static_assert(std::is_standard_layout_v<ArenaHeader>);
static_assert(sizeof(ArenaHeader) == kHeaderBytes && alignof(ArenaHeader) == kCacheLine);
static_assert(offsetof(ArenaHeader, layout_version) == 4 && offsetof(ArenaHeader, arena_bytes) == 8);
static_assert(offsetof(ArenaHeader, creator_pid) == 16 && offsetof(ArenaHeader, created_ns) == 24);
static_assert(offsetof(ArenaHeader, numa_node) == 32 && offsetof(ArenaHeader, create_flags) == 36);
inline constexpr std::uint32_t kCreatePrefaulted = 1;  // create_flags: every page was touched at create
static_assert(offsetof(ArenaHeader, geometry) == 64 && offsetof(ArenaHeader, regions) == 128);
static_assert(offsetof(ArenaHeader, name) == 256 && offsetof(ArenaHeader, header_checksum) == 320);
static_assert(offsetof(ArenaHeader, generation) == 384 && offsetof(ArenaHeader, recovered_slots) == 448);
static_assert(offsetof(ArenaHeader, attach_overflow) == 512 && offsetof(ArenaHeader, groups_version) == 576);
static_assert(offsetof(ArenaHeader, groups_lock) == 640 && offsetof(ArenaHeader, wake_syscalls) == 704);
inline constexpr std::size_t kChecksumBegin = 4;    // the checksum covers [4, 320): all immutable fields
inline constexpr std::size_t kChecksumEnd = 320;

// Probe-table entry: bits 0-1 state, bits 32-63 the key's hash tag. Lives apart from the slots so a
// probe touches 8 entries per cache line.
enum class IndexState : std::uint64_t { empty = 0, live = 1, tombstone = 2, inserting = 3 };
inline constexpr std::uint64_t kIndexStateMask = 3;
inline constexpr unsigned kIndexTagShift = 32;

// Slot meta word (atomic u64, written only while the epoch is odd):
//   bits 0-31 value length, 32-47 key length, 48-55 ValueType, 56-63 SlotFlags.
enum class ValueType : std::uint8_t { none = 0, bytes = 1, text = 2, i64 = 3, u64 = 4, f64 = 5, vector = 6 };
enum SlotFlags : std::uint8_t { kSlotLive = 1U << 0, kSlotTorn = 1U << 1 };

struct alignas(kCacheLine) SlotHeader {    // off size
  std::atomic<std::uint64_t> epoch;        //   0   8  seqlock word with the writer's pid: detail/epoch.hpp
  std::uint64_t reserved1;                 //   8   8  zero
  std::atomic<std::uint64_t> meta;         //  16   8  see above
  std::atomic<std::uint32_t> generation;   //  24   4  bumped on each insert: handles check it
  std::atomic<std::uint32_t> pins;         //  28   4  in-flight atomic ops; writers wait for 0
  std::atomic<std::uint64_t> labels;       //  32   8  Bloom mask: OR of the key's label masks and its own
  std::atomic<std::uint64_t> group_bits;   //  40   8  signal groups this key pulses, cached
  std::atomic<std::uint64_t> groups_seen;  //  48   8  header.groups_version that group_bits was built from
  std::atomic<std::uint64_t> changed_ns;   //  56   8  CLOCK_REALTIME of the last write that pulsed a group
  std::atomic<std::uint64_t> label_ids;    //  64   8  exact labels: bit i = label dictionary entry i
  std::uint64_t reserved0[7];              //  72  56  zero
};
static_assert(std::is_standard_layout_v<SlotHeader> && sizeof(SlotHeader) == 2 * kCacheLine);
static_assert(offsetof(SlotHeader, meta) == 16);
static_assert(offsetof(SlotHeader, generation) == 24 && offsetof(SlotHeader, pins) == 28);
static_assert(offsetof(SlotHeader, labels) == 32 && offsetof(SlotHeader, group_bits) == 40);
static_assert(offsetof(SlotHeader, groups_seen) == 48 && offsetof(SlotHeader, changed_ns) == 56);
static_assert(offsetof(SlotHeader, label_ids) == 64);

// A signal group: a filter (Bloom mask plus exact name) and the words watchers sleep on.
enum class GroupKind : std::uint32_t { free = 0, label = 1, key = 2 };
struct alignas(kCacheLine) SignalGroup {      // off size
  std::atomic<std::uint64_t> pulses;          //   0   8  publishes that matched; watchers compare
  std::atomic<std::uint64_t> waiters;         //   8   8  bitmap of watcher rows asleep on this group
  std::atomic<std::uint64_t> log_head;        //  16   8  next change-log sequence number
  std::uint64_t reserved0[5];                 //  24  40  zero
  std::atomic<std::uint64_t> mask;            //  64   8  Bloom mask M: matches a key with B & M == M
  std::atomic<std::uint32_t> kind;            //  72   4  GroupKind; free groups match nothing
  std::atomic<std::uint32_t> subscribers;     //  76   4  watcher rows subscribed; freed at 0
  std::atomic<std::uint32_t> label_id;        //  80   4  label dictionary entry (kind label)
  std::uint32_t name_bytes;                   //  84   4  length of name
  std::uint64_t reserved1[5];                 //  88  40  zero
  char name[128];                             // 128 128  label name, or key name (kind key)
};
static_assert(std::is_standard_layout_v<SignalGroup> && sizeof(SignalGroup) == 256);
static_assert(offsetof(SignalGroup, waiters) == 8 && offsetof(SignalGroup, log_head) == 16);
static_assert(offsetof(SignalGroup, mask) == 64 && offsetof(SignalGroup, kind) == 72);
static_assert(offsetof(SignalGroup, label_id) == 80 && offsetof(SignalGroup, name) == 128);

// Label dictionary entry: exact label names, so watchers can drop Bloom false positives.
struct alignas(kCacheLine) LabelEntry {       // off size
  std::atomic<std::uint32_t> state;           //   0   4  0 free, 1 being written, 2 ready
  std::uint32_t name_bytes;                   //   4   4
  std::uint64_t mask;                         //   8   8  the label's Bloom mask
  char name[48];                              //  16  48
};
static_assert(std::is_standard_layout_v<LabelEntry> && sizeof(LabelEntry) == 64);
static_assert(offsetof(LabelEntry, mask) == 8 && offsetof(LabelEntry, name) == 16);

// Change-log entry, a tiny seqlock: seq is 0 while being written, then log position + 1.
struct LogEntry {                             // off size
  std::atomic<std::uint64_t> seq;             //   0   8
  std::atomic<std::uint64_t> item;            //   8   8  bits 0-31 slot index, 32-63 slot generation
};
static_assert(std::is_standard_layout_v<LogEntry> && sizeof(LogEntry) == 16);

// A watcher: one per waiting thread or process. Publishers ring its doorbell (a futex word).
struct alignas(kCacheLine) WatcherRow {       // off size
  std::atomic<std::uint32_t> doorbell;        //   0   4  futex word, bumped by publishers
  std::atomic<std::uint32_t> pid;             //   4   4  owner, 0 when free
  std::atomic<std::uint64_t> groups;          //   8   8  groups subscribed (bit g = group g)
  std::atomic<std::uint64_t> wakeups;         //  16   8  times a publisher rang the doorbell
  std::uint64_t reserved0[5];                 //  24  40  zero
};
static_assert(std::is_standard_layout_v<WatcherRow> && sizeof(WatcherRow) == 64);
static_assert(offsetof(WatcherRow, pid) == 4 && offsetof(WatcherRow, groups) == 8);

// Vector row header; the row's floats follow, 64-aligned. Row i belongs to KV slot i.
struct alignas(kCacheLine) VectorRowHeader {  // off size
  std::atomic<std::uint64_t> epoch;           //   0   8  seqlock word with the writer's pid: detail/epoch.hpp
  std::uint64_t reserved2;                    //   8   8  zero
  std::atomic<std::uint32_t> generation;      //  16   4  the slot generation it was written for
  std::atomic<std::uint32_t> flags;           //  20   4  bit 0 present, bit 1 torn
  std::atomic<std::uint32_t> norm_bits;       //  24   4  float32 bits of the L2 norm
  std::uint32_t reserved0;                    //  28   4
  std::uint64_t reserved1[4];                 //  32  32
};
static_assert(std::is_standard_layout_v<VectorRowHeader> && sizeof(VectorRowHeader) == 64);
static_assert(offsetof(VectorRowHeader, generation) == 16 && offsetof(VectorRowHeader, norm_bits) == 24);

// Attach table row: pid of a process that has the arena open, 0 when free.
struct AttachEntry {                      // off size
  std::atomic<std::uint32_t> pid;         //   0   4
  std::uint32_t reserved0;                //   4   4
  std::atomic<std::uint64_t> attached_ns; //   8   8
};
static_assert(std::is_standard_layout_v<AttachEntry> && sizeof(AttachEntry) == 16);

constexpr std::uint64_t round_up(std::uint64_t n, std::uint64_t to) noexcept { return (n + to - 1) / to * to; }

constexpr std::uint32_t slot_stride_for(std::uint32_t key_bytes, std::uint32_t value_bytes) noexcept {
  return static_cast<std::uint32_t>(sizeof(SlotHeader) + round_up(key_bytes, kCacheLine) +
                                    round_up(value_bytes, kCacheLine));
}
constexpr std::uint64_t value_offset_in_slot(std::uint32_t key_bytes) noexcept {
  return sizeof(SlotHeader) + round_up(key_bytes, kCacheLine);
}
constexpr std::uint64_t vector_row_stride(std::uint32_t dim) noexcept {
  return sizeof(VectorRowHeader) + round_up(std::uint64_t{dim} * sizeof(float), kCacheLine);
}
// Sub-blocks of the groups region, from its start.
constexpr std::uint64_t labels_offset_in_groups() noexcept { return std::uint64_t{kGroupCount} * sizeof(SignalGroup); }
constexpr std::uint64_t logs_offset_in_groups() noexcept {
  return labels_offset_in_groups() + std::uint64_t{kLabelCapacity} * sizeof(LabelEntry);
}

}  // namespace weir::core

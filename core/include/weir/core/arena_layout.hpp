#pragma once
// The shared-memory layout of an arena, declared once. Offsets are from the arena base.
// Any change below bumps kArenaLayoutVersion and the golden test in tests/core/arena_layout_test.cpp.
//
//   offset 0          ArenaHeader (one page: identity, geometry, region table, shared counters)
//   regions[index]    slot_count x IndexEntry (u64: state | 32-bit hash tag), the probe table
//   regions[slots]    slot_count x slot_stride: SlotHeader, key bytes, value bytes
//   regions[groups]   kGroupCount x kGroupBytes      (signal groups; reserved)
//   regions[channels] channel descriptors + rings    (reserved)
//   regions[vectors]  vector_count x vector stride   (reserved)
//   regions[consumers] consumer_capacity x kConsumerBytes (reserved)
//   regions[attach]   attach_capacity x AttachEntry  (who has the arena open)
//
// A slot (slot_stride bytes, a multiple of 64):
//   +0   SlotHeader (64 B)   epoch, owner, meta, generation, labels
//   +64  key bytes           key_bytes rounded up to 64
//   +..  value bytes         value_bytes rounded up to 64; integers live in the first 8 bytes
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "weir/core/limits.hpp"

namespace weir::core {

inline constexpr std::uint32_t kArenaMagic = 0x5249'4557U;  // "WEIR" little-endian
inline constexpr std::uint16_t kArenaLayoutVersion = 1;     // bump on ANY change in this file

enum class Region : std::uint32_t { index = 0, slots, groups, channels, vectors, consumers, attach, count };
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
  std::uint32_t reserved0;              //  44   4  zero
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
  std::uint8_t reserved0[32];                        //   32   32  zero
  Geometry geometry;                                 //   64   64
  RegionDesc regions[kRegionSlots];                  //  128  128
  char name[64];                                     //  256   64  zero-terminated
  std::uint64_t header_checksum;                     //  320    8  FNV-1a of bytes [4, 320)
  std::uint8_t reserved1[56];                        //  328   56  zero
  // Mutable, shared counters: each on its own line, written by any process.
  alignas(kCacheLine) std::atomic<std::uint64_t> generation;      //  384  bumped by restore
  alignas(kCacheLine) std::atomic<std::uint64_t> recovered_slots; //  448  stuck slots recovered
  alignas(kCacheLine) std::atomic<std::uint64_t> attach_overflow; //  512  attaches not tracked: table full
  std::uint8_t reserved2[kHeaderBytes - 576];                     //  576  zero
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free && std::atomic<std::uint32_t>::is_always_lock_free);
static_assert(std::is_standard_layout_v<ArenaHeader>);
static_assert(sizeof(ArenaHeader) == kHeaderBytes && alignof(ArenaHeader) == kCacheLine);
static_assert(offsetof(ArenaHeader, layout_version) == 4 && offsetof(ArenaHeader, arena_bytes) == 8);
static_assert(offsetof(ArenaHeader, creator_pid) == 16 && offsetof(ArenaHeader, created_ns) == 24);
static_assert(offsetof(ArenaHeader, geometry) == 64 && offsetof(ArenaHeader, regions) == 128);
static_assert(offsetof(ArenaHeader, name) == 256 && offsetof(ArenaHeader, header_checksum) == 320);
static_assert(offsetof(ArenaHeader, generation) == 384 && offsetof(ArenaHeader, recovered_slots) == 448);
static_assert(offsetof(ArenaHeader, attach_overflow) == 512);
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

struct alignas(kCacheLine) SlotHeader {   // off size
  std::atomic<std::uint64_t> epoch;       //   0   8  seqlock: even stable, odd write in progress
  std::atomic<std::uint64_t> owner;       //   8   8  pid of the writer while odd, 0 otherwise
  std::atomic<std::uint64_t> meta;        //  16   8  see above
  std::atomic<std::uint32_t> generation;  //  24   4  bumped on each insert: handles check it
  std::atomic<std::uint32_t> pins;        //  28   4  in-flight atomic ops; writers wait for 0
  std::atomic<std::uint64_t> labels;      //  32   8  Bloom mask of the key's labels (signal groups)
  std::atomic<std::uint64_t> changed_ns;  //  40   8  CLOCK_REALTIME of the last write (watchers)
  std::uint64_t reserved1[2];             //  48  16  zero
};
static_assert(std::is_standard_layout_v<SlotHeader> && sizeof(SlotHeader) == kCacheLine);
static_assert(offsetof(SlotHeader, owner) == 8 && offsetof(SlotHeader, meta) == 16);
static_assert(offsetof(SlotHeader, generation) == 24 && offsetof(SlotHeader, pins) == 28);
static_assert(offsetof(SlotHeader, labels) == 32 && offsetof(SlotHeader, changed_ns) == 40);

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

}  // namespace weir::core

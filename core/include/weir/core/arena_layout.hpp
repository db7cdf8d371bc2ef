#pragma once
// The shared-memory layout of an arena, declared once. Offsets are from the arena base.
// Any change below bumps kArenaLayoutVersion and the golden test in tests/core/arena_layout_test.cpp.
//
//   offset 0          ArenaHeader (one page: identity, geometry, region table, shared counters, the
//                     run control at 832: RunControlBlock)
//   regions[index]    slot_count x IndexEntry (u64: state | 32-bit hash tag), the probe table
//   regions[slots]    slot_count x slot_stride: SlotHeader, key bytes, value bytes
//   regions[groups]   kGroupCount x SignalGroup, kLabelCapacity x LabelEntry,
//                     kGroupCount x group_log_entries x LogEntry (each group's change log)
//   regions[channels] channel_capacity x ChannelDesc, then the channel data pool (channel_data_bytes):
//                     each channel's ring (ring_blocks x (BlockHeader + payload)) and min/max pyramid
//   regions[vectors]  vector_count x (VectorRowHeader + vector_dim floats, 64-aligned); row i is slot i's
//   regions[consumers] consumer_capacity x ConsumerRow
//   regions[attach]   attach_capacity x AttachEntry  (who has the arena open)
//   regions[watchers] kWatcherCapacity x WatcherRow  (processes waiting on signal groups)
//
// A slot (slot_stride bytes, a multiple of 64):
//   +0   SlotHeader (128 B)  line 0: epoch, meta, generation, pins, labels, groups; line 1: label ids
//   +128 key bytes           key_bytes rounded up to 64
//   +..  value bytes         value_bytes rounded up to 64; integers live in the first 8 bytes
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "weir/core/limits.hpp"

namespace weir::core {

inline constexpr std::uint32_t kArenaMagic = 0x5249'4557U;  // "WEIR" little-endian
inline constexpr std::uint16_t kArenaLayoutVersion = 9;     // bump on ANY change in this file or the key hash

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

// The run control (weir/core/run_control.hpp): the arena's one run state machine, in the header so
// every part, door and viewer sees the same run. `word` is a seqlock word in the epoch_*() form: odd
// (with the pid of its holder) while a transition writes the fields, so transitions are serialized
// and a holder killed mid-way is named. Zero at create: idle, no run yet.
inline constexpr std::uint32_t kRunTitleBytes = 256;     // title, UTF-8, without a terminating zero
inline constexpr std::uint32_t kRunOperatorBytes = 128;  // operator(s)
inline constexpr std::uint32_t kRunSampleBytes = 128;    // sample name
inline constexpr std::uint32_t kRunCommentBytes = 512;   // comment
inline constexpr std::uint32_t kRunDoorBytes = 64;       // the door of the last transition ("cli", "http", ...)
inline constexpr std::uint32_t kRunDirBytes = 512;       // the directory run numbers are persisted in
inline constexpr std::uint32_t kRunRecorderRows = 8;     // recorders that take part in controlled runs

// A recorder taking part in controlled runs: which run's files it has open and which it closed last.
struct alignas(kCacheLine) RunRecorderRow {     // off size
  std::atomic<std::uint32_t> pid;               //   0   4  0 when free
  std::uint32_t reserved0;                      //   4   4  zero
  std::atomic<std::uint64_t> open_run;          //   8   8  the run whose files it has open, 0 none
  std::atomic<std::uint64_t> closed_run;        //  16   8  the last run whose files it closed (and synced)
  std::atomic<std::uint64_t> first_block_ns;    //  24   8  CLOCK_REALTIME it recorded open_run's first block
  std::atomic<std::uint64_t> closed_ns;         //  32   8  CLOCK_REALTIME it closed closed_run's files
  std::uint64_t reserved1[3];                   //  40  24  zero
};
static_assert(std::is_standard_layout_v<RunRecorderRow> && sizeof(RunRecorderRow) == 64);

struct alignas(kCacheLine) RunControlBlock {    //  off  size
  std::atomic<std::uint64_t> word;              //    0    8  seqlock word with the transition holder's pid
  std::atomic<std::uint32_t> changes;           //    8    4  futex word: bumped after every transition
  std::atomic<std::uint32_t> state;             //   12    4  RunState
  std::atomic<std::uint64_t> number;            //   16    8  the running run, or the last one
  std::atomic<std::uint64_t> highest;           //   24    8  the highest number ever started here
  std::atomic<std::int64_t> start_ns;           //   32    8  CLOCK_REALTIME of the run's start
  std::atomic<std::int64_t> stop_ns;            //   40    8  of the last stop (while running: the previous run's)
  std::atomic<std::uint32_t> ended;             //   48    4  RunEnd of the last run
  std::uint32_t reserved0;                      //   52    4  zero
  std::atomic<std::uint64_t> transitions;       //   56    8  transitions made
  char door[kRunDoorBytes];                     //   64   64  zero-padded
  char title[kRunTitleBytes];                   //  128  256  zero-padded
  char operator_name[kRunOperatorBytes];        //  384  128
  char sample[kRunSampleBytes];                 //  512  128
  char comment[kRunCommentBytes];               //  640  512
  char dir[kRunDirBytes];                       // 1152  512  set once by whoever enables controlled runs
  RunRecorderRow recorders[kRunRecorderRows];   // 1664  512
};
static_assert(std::is_standard_layout_v<RunControlBlock> && sizeof(RunControlBlock) == 2176);
static_assert(offsetof(RunControlBlock, changes) == 8 && offsetof(RunControlBlock, number) == 16);
static_assert(offsetof(RunControlBlock, start_ns) == 32 && offsetof(RunControlBlock, transitions) == 56);
static_assert(offsetof(RunControlBlock, door) == 64 && offsetof(RunControlBlock, title) == 128);
static_assert(offsetof(RunControlBlock, comment) == 640 && offsetof(RunControlBlock, dir) == 1152);
static_assert(offsetof(RunControlBlock, recorders) == 1664);

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
  alignas(kCacheLine) std::atomic<std::uint64_t> channels_lock;   //  768  pid editing the channel table, 0 free
  std::atomic<std::uint64_t> channel_data_used;                   //  776  bytes of the channel data pool handed out
  alignas(kCacheLine) RunControlBlock run;                        //  832  the arena's run state machine
  std::uint8_t reserved2[kHeaderBytes - 832 - sizeof(RunControlBlock)];  // zero
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
static_assert(offsetof(ArenaHeader, channels_lock) == 768 && offsetof(ArenaHeader, channel_data_used) == 776);
static_assert(offsetof(ArenaHeader, run) == 832);
inline constexpr std::size_t kChecksumBegin = 4;    // the checksum covers [4, 320): all immutable fields
inline constexpr std::size_t kChecksumEnd = 320;

// Probe-table entry: bits 0-1 state, bits 32-63 the key's hash tag. Lives apart from the slots so a
// probe touches 8 entries per cache line.
enum class IndexState : std::uint64_t { empty = 0, live = 1, tombstone = 2, inserting = 3 };
inline constexpr std::uint64_t kIndexStateMask = 3;
inline constexpr unsigned kIndexTagShift = 32;

// The 64-bit seqlock word of every slot and vector row (SlotHeader::epoch, VectorRowHeader::epoch).
// While odd it also names its writer, so a claim and the record of who holds it are one atomic step:
// a writer killed at any instant leaves a word that says which process to check.
//
//   bit 0       odd: a write is in progress
//   bits 1-22   pid of the writer while odd (Linux pids are below 2^22), 0 while even
//   bits 23-63  version: bumped by one on every completed write (41 bits: no wrap in practice)
inline constexpr std::uint64_t kEpochOdd = 1;
inline constexpr unsigned kEpochPidShift = 1;
inline constexpr std::uint64_t kEpochPidMask = ((std::uint64_t{1} << 22) - 1) << kEpochPidShift;
inline constexpr std::uint64_t kEpochUnit = std::uint64_t{1} << 23;  // one version step

[[nodiscard]] constexpr bool epoch_odd(std::uint64_t w) noexcept { return (w & kEpochOdd) != 0; }
/// Completed writes so far.
[[nodiscard]] constexpr std::uint64_t epoch_version(std::uint64_t w) noexcept { return w / kEpochUnit; }
/// The pid of the writer inside while the word is odd; 0 while even.
[[nodiscard]] constexpr std::uint32_t epoch_owner(std::uint64_t w) noexcept {
  return static_cast<std::uint32_t>((w & kEpochPidMask) >> kEpochPidShift);
}
/// The odd word a writer with `pid` stores over the even word `even`.
[[nodiscard]] constexpr std::uint64_t epoch_claimed(std::uint64_t even, std::uint32_t pid) noexcept {
  return even | ((std::uint64_t{pid} << kEpochPidShift) & kEpochPidMask) | kEpochOdd;
}
/// The even word that ends the write begun by `odd`: owner cleared, version + 1.
[[nodiscard]] constexpr std::uint64_t epoch_released(std::uint64_t odd) noexcept {
  return (odd & ~(kEpochUnit - 1)) + kEpochUnit;
}
static_assert(epoch_owner(epoch_claimed(5 * kEpochUnit, 4194303)) == 4194303);
static_assert(epoch_released(epoch_claimed(5 * kEpochUnit, 77)) == 6 * kEpochUnit);

// Slot meta word (atomic u64, written only while the epoch is odd):
//   bits 0-31 value length, 32-47 key length, 48-55 ValueType, 56-63 SlotFlags.
enum class ValueType : std::uint8_t { none = 0, bytes = 1, text = 2, i64 = 3, u64 = 4, f64 = 5, vector = 6, array = 7 };
enum SlotFlags : std::uint8_t { kSlotLive = 1U << 0, kSlotTorn = 1U << 1 };

struct alignas(kCacheLine) SlotHeader {    // off size
  std::atomic<std::uint64_t> epoch;        //   0   8  seqlock word with the writer's pid: epoch_*()
  std::uint64_t reserved1;                 //   8   8  zero
  std::atomic<std::uint64_t> meta;         //  16   8  see above
  std::atomic<std::uint32_t> generation;   //  24   4  bumped on each insert: handles check it
  std::atomic<std::uint32_t> pins;         //  28   4  in-flight atomic ops; writers wait for 0
  std::atomic<std::uint64_t> labels;       //  32   8  Bloom mask: OR of the key's label masks and its own
  std::atomic<std::uint64_t> group_bits;   //  40   8  signal groups this key pulses, cached
  std::atomic<std::uint64_t> groups_seen;  //  48   8  header.groups_version that group_bits was built from
  std::atomic<std::uint64_t> changed_ns;   //  56   8  CLOCK_REALTIME of the last write that pulsed a group
  std::atomic<std::uint64_t> label_ids;    //  64   8  exact labels: bit i = label dictionary entry i
  std::atomic<std::uint64_t> array_shape;  //  72   8  array values: bits 0-7 element Dtype, 8-15 rank (1 or 2); 0 otherwise
  std::atomic<std::uint64_t> array_dims;   //  80   8  dims[0] in bits 0-31, dims[1] in bits 32-63 (rank 2)
  std::uint64_t reserved0[5];              //  88  40  zero
};
// array_shape and array_dims are written only while the epoch is odd and read inside the seqlock
// window, like meta. Readers look at them only when meta's type is ValueType::array.
static_assert(std::is_standard_layout_v<SlotHeader> && sizeof(SlotHeader) == 2 * kCacheLine);
static_assert(offsetof(SlotHeader, meta) == 16);
static_assert(offsetof(SlotHeader, generation) == 24 && offsetof(SlotHeader, pins) == 28);
static_assert(offsetof(SlotHeader, labels) == 32 && offsetof(SlotHeader, group_bits) == 40);
static_assert(offsetof(SlotHeader, groups_seen) == 48 && offsetof(SlotHeader, changed_ns) == 56);
static_assert(offsetof(SlotHeader, label_ids) == 64 && offsetof(SlotHeader, array_shape) == 72);
static_assert(offsetof(SlotHeader, array_dims) == 80 && offsetof(SlotHeader, reserved0) == 88);

// A signal group: a filter (Bloom mask plus exact name) and the words watchers sleep on.
enum class GroupKind : std::uint32_t { free = 0, label = 1, key = 2, channel = 3 };
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

// Label dictionary entry: exact label names, so watchers can drop Bloom false positives. An entry
// is written once under the group-table lock and never changes after it is ready.
enum class LabelState : std::uint32_t { free = 0, writing = 1, ready = 2 };  // ready stored last, release
struct alignas(kCacheLine) LabelEntry {       // off size
  std::atomic<std::uint32_t> state;           //   0   4  LabelState
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

// ---- channels -----------------------------------------------------------------------------------

enum class Dtype : std::uint32_t { i8 = 1, u8, i16, u16, i32, u32, i64, f32, f64, c64 };
enum class FullPolicy : std::uint32_t { wait = 0, drop = 1 };      // a lossless consumer's ring is full
enum class ConsumerPolicy : std::uint32_t { lossy = 0, lossless = 1, latest = 2 };
enum class ChannelState : std::uint32_t { free = 0, creating = 1, ready = 2 };

// A channel descriptor. Line 0 is the writer's; the rest is fixed at creation.
struct alignas(kCacheLine) ChannelDesc {         // off size
  std::atomic<std::uint64_t> head;               //   0   8  blocks published: the next block's sequence number
  std::atomic<std::uint32_t> writer_pid;         //   8   4  the channel's one writer, 0 none
  std::atomic<std::uint32_t> state;              //  12   4  ChannelState, ready stored last with release
  std::atomic<std::uint64_t> samples_written;    //  16   8
  std::atomic<std::uint64_t> dropped_at_source;  //  24   8  blocks not written: a lossless consumer was full
  std::atomic<std::uint64_t> writer_waits;       //  32   8  claims that waited for a lossless consumer
  std::atomic<std::uint64_t> group_bits;         //  40   8  signal groups a publish pulses, cached
  std::atomic<std::uint64_t> groups_seen;        //  48   8  header.groups_version group_bits was built from
  std::atomic<std::uint64_t> last_publish_ns;    //  56   8  CLOCK_REALTIME of the last publish
  char name[64];                                 //  64  64  zero-terminated
  Dtype dtype;                                   // 128   4
  std::uint32_t sample_bytes;                    // 132   4
  std::uint32_t samples_per_block;               // 136   4
  std::uint32_t ring_blocks;                     // 140   4  a power of two
  std::uint64_t block_stride;                    // 144   8  BlockHeader + payload, 64-aligned
  std::uint64_t ring_offset;                     // 152   8  from the arena base
  std::uint64_t rate_bits;                       // 160   8  f64 bits of the sample rate in Hz
  std::uint64_t labels;                          // 168   8  Bloom mask of the labels and the channel's own name
  std::uint64_t label_ids;                       // 176   8  exact label ids
  FullPolicy full_policy;                        // 184   4
  std::uint32_t pyramid_levels;                  // 188   4
  std::int64_t wait_timeout_ns;                  // 192   8  how long a writer waits for a full lossless consumer
  std::uint64_t pyramid_offset;                  // 200   8  from the arena base
  std::uint32_t pyramid_entries;                 // 208   4  entries per level, a power of two
  std::uint32_t pyramid_factor;                  // 212   4  samples per level-0 entry; each level multiplies by it
  char units[32];                                // 216  32
  std::uint64_t created_ns;                      // 248   8
  std::atomic<std::uint32_t> lossless_readers;   // 256   4  active lossless rows: 0 lets claim() skip the table
  std::atomic<std::uint32_t> lossless_epoch;     // 260   4  bumped by each lossless registration: the writer's
                                                 //           cached room in the ring must be measured again
  // Frame shape: each block holds frames_per_block frames of frame_elements elements along an axis.
  std::uint32_t frames_per_block;                // 264   4  0: a plain sample channel; else
                                                 //           samples_per_block = frames_per_block * frame_elements
  std::uint32_t frame_elements;                  // 268   4
  std::uint64_t axis_start_bits;                 // 272   8  f64 bits: the axis value of element 0 of a frame
  std::uint64_t axis_step_bits;                  // 280   8  f64 bits: the axis step between elements
  char axis_name[32];                            // 288  32  e.g. "frequency", "energy", "time"; zero-terminated
  char axis_units[32];                           // 320  32  e.g. "Hz", "keV", "s"
  char axis_values_key[64];                      // 352  64  optional: a KV key holding explicit f64 axis values
  std::uint8_t reserved0[kChannelDescBytes - 416];  // 416  zero
};
// rate_hz stays elements per second: a framed channel delivers rate_hz / frame_elements frames per second.
static_assert(std::is_standard_layout_v<ChannelDesc> && sizeof(ChannelDesc) == kChannelDescBytes);
static_assert(offsetof(ChannelDesc, writer_pid) == 8 && offsetof(ChannelDesc, state) == 12);
static_assert(offsetof(ChannelDesc, last_publish_ns) == 56 && offsetof(ChannelDesc, name) == 64);
static_assert(offsetof(ChannelDesc, dtype) == 128 && offsetof(ChannelDesc, block_stride) == 144);
static_assert(offsetof(ChannelDesc, ring_offset) == 152 && offsetof(ChannelDesc, rate_bits) == 160);
static_assert(offsetof(ChannelDesc, full_policy) == 184 && offsetof(ChannelDesc, wait_timeout_ns) == 192);
static_assert(offsetof(ChannelDesc, pyramid_offset) == 200 && offsetof(ChannelDesc, units) == 216);
static_assert(offsetof(ChannelDesc, created_ns) == 248 && offsetof(ChannelDesc, lossless_readers) == 256);
static_assert(offsetof(ChannelDesc, lossless_epoch) == 260 && offsetof(ChannelDesc, frames_per_block) == 264);
static_assert(offsetof(ChannelDesc, frame_elements) == 268 && offsetof(ChannelDesc, axis_start_bits) == 272);
static_assert(offsetof(ChannelDesc, axis_step_bits) == 280 && offsetof(ChannelDesc, axis_name) == 288);
static_assert(offsetof(ChannelDesc, axis_units) == 320 && offsetof(ChannelDesc, axis_values_key) == 352);
static_assert(offsetof(ChannelDesc, reserved0) == 416);

// The header of one block slot in a channel's ring; the samples follow. Block seq lives in slot
// seq & (ring_blocks - 1). state: kBlockEmptyState until the slot's first block, then
// block_writing_state(seq) while block seq is being written and block_committed_state(seq) once it
// is published. States only grow, so a reader expecting block s that finds a larger state knows the
// slot was reused for a later block, and a smaller one that block s is not published yet.
struct alignas(kCacheLine) BlockHeader {         // off size
  std::atomic<std::uint64_t> state;              //   0   8
  std::atomic<std::uint32_t> samples;            //   8   4  samples in this block
  std::atomic<std::uint32_t> flags;              //  12   4  driver flags
  std::atomic<std::uint64_t> realtime_ns;        //  16   8  acquisition time, ns since the epoch
  std::atomic<std::uint64_t> monotonic_ns;       //  24   8  acquisition time, CLOCK_MONOTONIC
  std::atomic<std::uint64_t> first_sample;       //  32   8  index of its first sample in the channel's stream
  std::atomic<std::uint64_t> gap_from;           //  40   8  a gap block: the first sequence of its skip() run
  std::uint64_t reserved0[2];                    //  48  16  zero
};
static_assert(std::is_standard_layout_v<BlockHeader> && sizeof(BlockHeader) == kCacheLine);
static_assert(offsetof(BlockHeader, samples) == 8 && offsetof(BlockHeader, realtime_ns) == 16);
static_assert(offsetof(BlockHeader, first_sample) == 32 && offsetof(BlockHeader, gap_from) == 40);
inline constexpr std::uint64_t kBlockEmptyState = 0;  // a slot that never held a block
constexpr std::uint64_t block_committed_state(std::uint64_t seq) noexcept { return 2 * (seq + 1); }
constexpr std::uint64_t block_writing_state(std::uint64_t seq) noexcept { return 2 * (seq + 1) + 1; }
// BlockHeader::flags bit 31: the block is a gap marker (ChannelWriter::skip), carrying no samples;
// readers count it lost. A gap block's bits 0-7 hold why it is missing (core::GapReason), and its
// gap_from the first sequence of the run skip() published it in (a run longer than the ring jumps
// the head: a reader lapped by the jump finds the run's start in the oldest block it can still read).
// A data block's bit 0: its realtime_ns is the source's own clock (a timestamp the device sent, e.g.
// a UDP packet's), not the host's time of writing or receiving it; recorders say which per channel.
// A derived block's bit 1 (a shard output's): it summarises a window of input cut short, by an
// input gap or by stop, not a full one (a partial spectrum); its realtime_ns is still the window's
// first input sample. Drivers use bits 2-30 of data blocks as they like.
inline constexpr std::uint32_t kBlockGapFlag = 1U << 31;
inline constexpr std::uint32_t kBlockGapReasonMask = 0xFFU;
inline constexpr std::uint32_t kBlockSourceTimeFlag = 1U << 0;
inline constexpr std::uint32_t kBlockPartialFlag = 1U << 1;

// One min/max pyramid entry: both float32s in one word, stored whole by the writer once the entry's
// samples are in (pack_range / unpack_range). Entry e of a level lives in slot e mod pyramid_entries;
// readers trust it by the channel's samples_written before and after they read (envelope()).
struct PyramidEntry {                            // off size
  std::atomic<std::uint64_t> range;              //   0   8  min bits (low half), max bits (high half)
};
static_assert(std::is_standard_layout_v<PyramidEntry> && sizeof(PyramidEntry) == 8);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

inline std::uint64_t pack_range(float lo, float hi) noexcept {
  return std::uint64_t{std::bit_cast<std::uint32_t>(lo)} | std::uint64_t{std::bit_cast<std::uint32_t>(hi)} << 32;
}
inline void unpack_range(std::uint64_t range, float& lo, float& hi) noexcept {
  lo = std::bit_cast<float>(static_cast<std::uint32_t>(range));
  hi = std::bit_cast<float>(static_cast<std::uint32_t>(range >> 32));
}

// A consumer's row: who reads which channel, how far, and what it lost.
struct alignas(kCacheLine) ConsumerRow {         // off size
  std::atomic<std::uint32_t> pid;                //   0   4  0 when free
  std::atomic<std::uint32_t> channel;            //   4   4  channel index
  std::atomic<std::uint64_t> cursor;             //   8   8  next block sequence it will read
  std::atomic<std::uint32_t> policy;             //  16   4  ConsumerPolicy
  std::atomic<std::uint32_t> active;             //  20   4  1 once every field is set
  std::atomic<std::uint64_t> heartbeat_ns;       //  24   8  CLOCK_MONOTONIC of its last read
  std::atomic<std::uint64_t> blocks_read;        //  32   8
  std::atomic<std::uint64_t> samples_read;       //  40   8
  std::atomic<std::uint64_t> blocks_lost;        //  48   8  lapped by the writer
  std::atomic<std::uint64_t> registered_ns;      //  56   8  CLOCK_REALTIME
  char name[64];                                 //  64  64  what it is ("scope", "recorder", ...)
  // Counters the consuming part itself keeps (a shard host, a recorder); zero for plain readers.
  std::atomic<std::uint64_t> blocks_out;         // 128   8  output blocks or records published
  std::atomic<std::uint64_t> blocks_skipped;     // 136   8  input blocks it chose not to process
  std::atomic<std::uint64_t> errors;             // 144   8  blocks whose processing failed
  std::atomic<std::uint64_t> proc_p50_ns;        // 152   8  processing time per block, recent p50
  std::atomic<std::uint64_t> proc_p99_ns;        // 160   8  recent p99
  std::atomic<std::uint64_t> bytes_out;          // 168   8  bytes written (recorders: to disk)
  char kind[32];                                 // 176  32  the part: "shard:fft", "record:hdf5", ...
  std::uint8_t reserved0[kConsumerBytes - 208];  // 208  zero
};
static_assert(std::is_standard_layout_v<ConsumerRow> && sizeof(ConsumerRow) == kConsumerBytes);
static_assert(offsetof(ConsumerRow, cursor) == 8 && offsetof(ConsumerRow, heartbeat_ns) == 24);
static_assert(offsetof(ConsumerRow, blocks_lost) == 48 && offsetof(ConsumerRow, name) == 64);
static_assert(offsetof(ConsumerRow, blocks_out) == 128 && offsetof(ConsumerRow, kind) == 176);

// Vector row header; the row's floats follow, 64-aligned. Row i belongs to KV slot i.
struct alignas(kCacheLine) VectorRowHeader {  // off size
  std::atomic<std::uint64_t> epoch;           //   0   8  seqlock word with the writer's pid: epoch_*()
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

// Golden layout: every literal here is deliberate. A layout change must fail this test until the
// version and these numbers are updated in the same commit.
#include <doctest/doctest.h>

#include <cstddef>

#include "weir/core/arena.hpp"
#include "weir/core/arena_layout.hpp"
#include "weir/core/detail/hash.hpp"

using namespace weir::core;

TEST_SUITE("core.arena_layout") {

TEST_CASE("the layout version and magic are the ones this build was tested with") {
  CHECK(kArenaLayoutVersion == 9);
  CHECK(kArenaMagic == 0x52494557U);
}

TEST_CASE("the key hash, which places keys and sets label bits, gives the values this version was tested with") {
  using weir::core::detail::hash_key;
  CHECK(hash_key("a") == 0x7455f8c872f6ca4aULL);
  CHECK(hash_key("adc0.volts") == 0x8e62304d0f534c0cULL);
  CHECK(hash_key("tag1000") == 0x28cbd236569454e1ULL);
  CHECK(hash_key("tag11000") == 0x048c65c7da7b2855ULL);
  CHECK(hash_key("a.key.longer.than.sixteen.bytes") == 0xd0737d84489cedabULL);
}

TEST_CASE("keys of different lengths with the same first and last four bytes hash apart") {
  using weir::core::detail::hash_key;
  // Reads of 5..8 bytes overlap in the middle: only the length tells these apart.
  CHECK(hash_key("tag1000") != hash_key("tag11000"));
  CHECK(hash_key("abcdwxyz") != hash_key("abcdxyz"));
  CHECK(hash_key("abcdxyz") != hash_key("abcxyz"));
}

TEST_CASE("header and slot structs keep their sizes and offsets") {
  CHECK(sizeof(ArenaHeader) == 4096);
  CHECK(offsetof(ArenaHeader, ready_magic) == 0);
  CHECK(offsetof(ArenaHeader, layout_version) == 4);
  CHECK(offsetof(ArenaHeader, header_bytes) == 6);
  CHECK(offsetof(ArenaHeader, arena_bytes) == 8);
  CHECK(offsetof(ArenaHeader, creator_pid) == 16);
  CHECK(offsetof(ArenaHeader, mode) == 20);
  CHECK(offsetof(ArenaHeader, created_ns) == 24);
  CHECK(offsetof(ArenaHeader, numa_node) == 32);
  CHECK(offsetof(ArenaHeader, create_flags) == 36);
  CHECK(offsetof(ArenaHeader, geometry) == 64);
  CHECK(offsetof(ArenaHeader, regions) == 128);
  CHECK(offsetof(ArenaHeader, name) == 256);
  CHECK(offsetof(ArenaHeader, header_checksum) == 320);
  CHECK(offsetof(ArenaHeader, generation) == 384);
  CHECK(offsetof(ArenaHeader, recovered_slots) == 448);
  CHECK(offsetof(ArenaHeader, attach_overflow) == 512);
  CHECK(offsetof(ArenaHeader, groups_version) == 576);
  CHECK(offsetof(ArenaHeader, groups_lock) == 640);
  CHECK(offsetof(ArenaHeader, wake_syscalls) == 704);
  CHECK(offsetof(ArenaHeader, channels_lock) == 768);
  CHECK(offsetof(ArenaHeader, channel_data_used) == 776);
  CHECK(offsetof(ArenaHeader, run) == 832);
  CHECK(sizeof(RunControlBlock) == 2176);
  CHECK(offsetof(RunControlBlock, word) == 0);
  CHECK(offsetof(RunControlBlock, changes) == 8);
  CHECK(offsetof(RunControlBlock, state) == 12);
  CHECK(offsetof(RunControlBlock, number) == 16);
  CHECK(offsetof(RunControlBlock, highest) == 24);
  CHECK(offsetof(RunControlBlock, start_ns) == 32);
  CHECK(offsetof(RunControlBlock, stop_ns) == 40);
  CHECK(offsetof(RunControlBlock, ended) == 48);
  CHECK(offsetof(RunControlBlock, transitions) == 56);
  CHECK(offsetof(RunControlBlock, door) == 64);
  CHECK(offsetof(RunControlBlock, title) == 128);
  CHECK(offsetof(RunControlBlock, operator_name) == 384);
  CHECK(offsetof(RunControlBlock, sample) == 512);
  CHECK(offsetof(RunControlBlock, comment) == 640);
  CHECK(offsetof(RunControlBlock, dir) == 1152);
  CHECK(offsetof(RunControlBlock, recorders) == 1664);
  CHECK(sizeof(RunRecorderRow) == 64);
  CHECK(offsetof(RunRecorderRow, open_run) == 8);
  CHECK(offsetof(RunRecorderRow, closed_run) == 16);
  CHECK(offsetof(RunRecorderRow, first_block_ns) == 24);
  CHECK(offsetof(RunRecorderRow, closed_ns) == 32);
  CHECK(sizeof(Geometry) == 64);
  CHECK(sizeof(RegionDesc) == 16);
  CHECK(sizeof(SlotHeader) == 128);
  CHECK(offsetof(SlotHeader, epoch) == 0);
  CHECK(offsetof(SlotHeader, meta) == 16);
  CHECK(offsetof(SlotHeader, generation) == 24);
  CHECK(offsetof(SlotHeader, pins) == 28);
  CHECK(offsetof(SlotHeader, labels) == 32);
  CHECK(offsetof(SlotHeader, group_bits) == 40);
  CHECK(offsetof(SlotHeader, groups_seen) == 48);
  CHECK(offsetof(SlotHeader, changed_ns) == 56);
  CHECK(offsetof(SlotHeader, label_ids) == 64);
  CHECK(offsetof(SlotHeader, array_shape) == 72);
  CHECK(offsetof(SlotHeader, array_dims) == 80);
  CHECK(static_cast<int>(ValueType::array) == 7);
  CHECK(sizeof(AttachEntry) == 16);
  CHECK(sizeof(SignalGroup) == 256);
  CHECK(offsetof(SignalGroup, waiters) == 8);
  CHECK(offsetof(SignalGroup, log_head) == 16);
  CHECK(offsetof(SignalGroup, mask) == 64);
  CHECK(offsetof(SignalGroup, kind) == 72);
  CHECK(offsetof(SignalGroup, subscribers) == 76);
  CHECK(offsetof(SignalGroup, label_id) == 80);
  CHECK(offsetof(SignalGroup, name) == 128);
  CHECK(sizeof(LabelEntry) == 64);
  CHECK(offsetof(LabelEntry, name) == 16);
  CHECK(sizeof(LogEntry) == 16);
  CHECK(sizeof(WatcherRow) == 64);
  CHECK(offsetof(WatcherRow, groups) == 8);
  CHECK(offsetof(WatcherRow, wakeups) == 16);
  CHECK(sizeof(ChannelDesc) == 1024);
  CHECK(offsetof(ChannelDesc, writer_pid) == 8);
  CHECK(offsetof(ChannelDesc, samples_written) == 16);
  CHECK(offsetof(ChannelDesc, dropped_at_source) == 24);
  CHECK(offsetof(ChannelDesc, name) == 64);
  CHECK(offsetof(ChannelDesc, dtype) == 128);
  CHECK(offsetof(ChannelDesc, ring_blocks) == 140);
  CHECK(offsetof(ChannelDesc, ring_offset) == 152);
  CHECK(offsetof(ChannelDesc, rate_bits) == 160);
  CHECK(offsetof(ChannelDesc, wait_timeout_ns) == 192);
  CHECK(offsetof(ChannelDesc, pyramid_entries) == 208);
  CHECK(offsetof(ChannelDesc, units) == 216);
  CHECK(offsetof(ChannelDesc, lossless_readers) == 256);
  CHECK(offsetof(ChannelDesc, lossless_epoch) == 260);
  CHECK(offsetof(ChannelDesc, frames_per_block) == 264);
  CHECK(offsetof(ChannelDesc, frame_elements) == 268);
  CHECK(offsetof(ChannelDesc, axis_start_bits) == 272);
  CHECK(offsetof(ChannelDesc, axis_step_bits) == 280);
  CHECK(offsetof(ChannelDesc, axis_name) == 288);
  CHECK(offsetof(ChannelDesc, axis_units) == 320);
  CHECK(offsetof(ChannelDesc, axis_values_key) == 352);
  CHECK(sizeof(BlockHeader) == 64);
  CHECK(offsetof(BlockHeader, monotonic_ns) == 24);
  CHECK(offsetof(BlockHeader, first_sample) == 32);
  CHECK(offsetof(BlockHeader, gap_from) == 40);
  CHECK(kBlockGapReasonMask == 0xFFU);
  CHECK(sizeof(PyramidEntry) == 8);
  CHECK(pack_range(1.0F, 2.0F) == 0x4000'0000'3F80'0000ULL);  // min in the low half, max in the high
  CHECK(sizeof(ConsumerRow) == 256);
  CHECK(offsetof(ConsumerRow, policy) == 16);
  CHECK(offsetof(ConsumerRow, blocks_read) == 32);
  CHECK(offsetof(ConsumerRow, registered_ns) == 56);
  CHECK(offsetof(ConsumerRow, blocks_out) == 128);
  CHECK(offsetof(ConsumerRow, proc_p99_ns) == 160);
  CHECK(offsetof(ConsumerRow, bytes_out) == 168);
  CHECK(offsetof(ConsumerRow, kind) == 176);
  CHECK(sizeof(VectorRowHeader) == 64);
  CHECK(offsetof(VectorRowHeader, generation) == 16);
  CHECK(offsetof(VectorRowHeader, flags) == 20);
  CHECK(offsetof(VectorRowHeader, norm_bits) == 24);
}

TEST_CASE("the state and seqlock encodings stored in the arena keep their values") {
  // BlockHeader::state: 0 never written, 2*(seq+1) published, 2*(seq+1)+1 being written.
  CHECK(kBlockEmptyState == 0);
  CHECK(block_committed_state(0) == 2);
  CHECK(block_writing_state(0) == 3);
  CHECK(block_committed_state(41) == 84);
  CHECK(block_writing_state(41) == 85);
  CHECK(block_writing_state(41) < block_committed_state(41 + 1));
  CHECK(kBlockGapFlag == 0x8000'0000U);
  // LabelEntry::state.
  CHECK(static_cast<std::uint32_t>(LabelState::free) == 0);
  CHECK(static_cast<std::uint32_t>(LabelState::writing) == 1);
  CHECK(static_cast<std::uint32_t>(LabelState::ready) == 2);
  // ChannelDesc::state.
  CHECK(static_cast<std::uint32_t>(ChannelState::ready) == 2);
  // The epoch word: bit 0 odd, bits 1-22 the writer's pid, bits 23-63 the version.
  CHECK(kEpochOdd == 1);
  CHECK(kEpochPidMask == 0x7f'fffeULL);
  CHECK(kEpochUnit == 0x80'0000ULL);
  CHECK(epoch_claimed(0x80'0000ULL * 3, 1234) == 0x180'0000ULL + (1234U << 1) + 1);
  CHECK(epoch_owner(0x180'0000ULL + (1234U << 1) + 1) == 1234);
  CHECK(epoch_version(0x180'0000ULL + (1234U << 1) + 1) == 3);
  CHECK(epoch_released(0x180'0000ULL + (1234U << 1) + 1) == 0x200'0000ULL);
  CHECK_FALSE(epoch_odd(0x200'0000ULL));
}

TEST_CASE("the default geometry plans the same regions as always") {
  ArenaHeader h{};
  REQUIRE(plan_layout(ArenaOptions{}, h));
  CHECK(h.arena_bytes == 24715264);
  CHECK(h.geometry.slot_stride == 4288);
  CHECK(h.geometry.vector_count == 1024);
  CHECK(h.geometry.vector_dim == 768);
  CHECK(h.geometry.group_log_entries == 256);
  const RegionDesc expected[] = {{4096, 8192},         {12288, 4390912},    {4403200, 282624},  {4685824, 16793600},
                                 {21479424, 3211264}, {24690688, 16384},   {24707072, 2048},   {24709120, 4096}};
  for (std::size_t r = 0; r < std::size(expected); ++r) {
    CAPTURE(r);
    CHECK(h.regions[r].offset == expected[r].offset);
    CHECK(h.regions[r].bytes == expected[r].bytes);
  }
}

TEST_CASE("absurd geometry is refused before anything is created") {
  ArenaHeader h{};
  ArenaOptions o;
  SUBCASE("a billion slots") { o.slot_count = 1'000'000'000; }
  SUBCASE("no slots") { o.slot_count = 0; }
  SUBCASE("zero-byte keys") { o.key_bytes = 0; }
  SUBCASE("values too small for an integer") { o.value_bytes = 4; }
  SUBCASE("a mode without owner read-write") { o.mode = 0400; }
  SUBCASE("a terabyte of channel data") { o.channel_data_bytes = 1ULL << 41; }
  SUBCASE("a change log that is not a power of two") { o.group_log_entries = 100; }
  auto r = plan_layout(o, h);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::invalid_argument);
}

}  // TEST_SUITE

// The stream assembler on packets in any order, through a sink that records what a channel would
// get: blocks with their samples and stamps, and gaps.
#include "assembler_harness.hpp"

using namespace weir::acq;
using namespace weir::test::udp;
using weir::core::Dtype;

TEST_SUITE("acquisition.udp.stream_assembler") {

TEST_CASE("packets in order fill blocks with exactly their samples and nothing is lost") {
  RecordingSink sink;
  auto a = StreamAssembler::create(config(8), sink);
  REQUIRE(a);
  feed(*a, packet_starts(8, 4), 4);  // 32 samples: 4 blocks
  const auto blocks = sink.blocks();
  REQUIRE(blocks.size() == 4);
  for (std::uint64_t b = 0; b < 4; ++b) CHECK(blocks[b] == ramp(b * 8, 8));
  CHECK(a->counters().packets == 8);
  CHECK(a->counters().samples == 32);
  CHECK(a->counters().lost_samples == 0);
  CHECK(a->counters().reordered == 0);
  CHECK(a->counters().blocks_published == 4);
  CHECK(a->counters().bytes == 8 * (kRawHeaderBytes + 8));
}

TEST_CASE("packets that straddle block boundaries are split across blocks") {
  RecordingSink sink;
  auto a = StreamAssembler::create(config(8), sink);
  REQUIRE(a);
  feed(*a, packet_starts(11, 3), 3);  // 33 samples: 4 whole blocks, one sample open
  const auto blocks = sink.blocks();
  REQUIRE(blocks.size() == 4);
  for (std::uint64_t b = 0; b < 4; ++b) CHECK(blocks[b] == ramp(b * 8, 8));
  a->finish();
  REQUIRE(sink.blocks().size() == 5);
  CHECK(sink.blocks()[4] == ramp(32, 1));  // the stream's short tail
}

TEST_CASE("the first packet seen starts the stream, wherever its index is") {
  RecordingSink sink;
  auto a = StreamAssembler::create(config(8), sink);
  REQUIRE(a);
  feed(*a, packet_starts(4, 4, 1'000'003), 4);
  REQUIRE(sink.blocks().size() == 2);
  CHECK(sink.blocks()[0] == ramp(1'000'003, 8));
}

TEST_CASE("a lost packet turns its block into a gap and counts exactly its samples lost") {
  RecordingSink sink;
  auto a = StreamAssembler::create(config(8, 1), sink);
  REQUIRE(a);
  auto starts = packet_starts(16, 4);
  starts.erase(starts.begin() + 5);  // samples 20..23: block 2
  feed(*a, starts, 4);
  a->finish();
  const auto blocks = sink.blocks();
  REQUIRE(blocks.size() == 8);
  CHECK(blocks[1] == ramp(8, 8));
  CHECK(blocks[2].empty());  // the gap
  CHECK(blocks[3] == ramp(24, 8));
  CHECK(a->counters().lost_samples == 4);
  CHECK(a->counters().discarded_samples == 4);
  CHECK(a->counters().gap_blocks == 1);
  CHECK(a->counters().blocks_published == 7);
}

TEST_CASE("packets reordered within the window are put in place") {
  RecordingSink sink;
  auto a = StreamAssembler::create(config(8, 2), sink);
  REQUIRE(a);
  // 0 4 | 12 8 | 20 16 24 ... : swaps inside a block and across a boundary, 2 blocks late at most
  feed(*a, {0, 4, 12, 8, 20, 28, 16, 24, 32, 36, 44, 40}, 4);
  a->finish();
  const auto blocks = sink.blocks();
  REQUIRE(blocks.size() == 6);
  for (std::uint64_t b = 0; b < 6; ++b) CHECK(blocks[b] == ramp(b * 8, 8));
  CHECK(a->counters().reordered == 4);
  CHECK(a->counters().lost_samples == 0);
  CHECK(a->counters().late == 0);
}

TEST_CASE("a packet up to the window late is placed; one later is late and its samples stay counted lost") {
  RecordingSink sink;
  auto a = StreamAssembler::create(config(8, 1), sink);
  REQUIRE(a);
  feed(*a, {0, 4, 12, 16, 20}, 4);  // 8 missing; data in block 2 is one block past block 1: still open
  CHECK(a->counters().lost_samples == 0);
  feed(*a, {24}, 4);                // data in block 3 closes block 1 (window 1)
  CHECK(a->counters().lost_samples == 4);
  CHECK(a->counters().source_loss == 1);
  feed(*a, {8}, 4);
  CHECK(a->counters().late == 1);
  CHECK(a->counters().source_loss == 0);  // late, not lost: taken back
  CHECK(a->counters().lost_samples == 4);
  feed(*a, {28}, 4);
  a->finish();
  const auto blocks = sink.blocks();
  REQUIRE(blocks.size() == 4);
  CHECK(blocks[1].empty());
  CHECK(blocks[2] == ramp(16, 8));
  CHECK(blocks[3] == ramp(24, 8));
}

TEST_CASE("a reorder window of R holds a packet displaced by exactly R blocks, and one more is late") {
  for (const std::uint32_t r : {0U, 1U, 2U, 5U}) {
    CAPTURE(r);
    RecordingSink sink;
    auto a = StreamAssembler::create(config(4, r), sink);
    REQUIRE(a);
    // One packet a block; packet 1 arrives after packets 2 .. 1 + r (displaced by r), then the rest.
    std::vector<std::uint64_t> order{0};
    for (std::uint64_t k = 2; k <= 1 + r; ++k) order.push_back(k * 4);
    order.push_back(4);
    for (std::uint64_t k = 2 + r; k < 12; ++k) order.push_back(k * 4);
    feed(*a, order, 4);
    a->finish();
    CHECK(a->counters().late == 0);
    CHECK(a->counters().lost_samples == 0);
    CHECK(sink.blocks().size() == 12);

    RecordingSink sink2;
    auto b = StreamAssembler::create(config(4, r), sink2);
    REQUIRE(b);
    std::vector<std::uint64_t> later{0};
    for (std::uint64_t k = 2; k <= 2 + r; ++k) later.push_back(k * 4);
    later.push_back(4);  // displaced by r + 1: its block has closed
    for (std::uint64_t k = 3 + r; k < 12; ++k) later.push_back(k * 4);
    feed(*b, later, 4);
    b->finish();
    CHECK(b->counters().late == 1);
    CHECK(b->counters().gap_blocks == 1);  // its own block only: the on-time neighbours are all placed
    CHECK(b->counters().source_loss == 0);
    CHECK(b->counters().recorded == 11);
  }
}

TEST_CASE("a duplicate packet is counted and changes nothing") {
  RecordingSink sink;
  auto a = StreamAssembler::create(config(8), sink);
  REQUIRE(a);
  std::vector<std::byte> buf;
  (void)a->accept(raw(buf, 0, 4), 1, 1);
  std::vector<std::byte> other;
  PacketView dup = raw(other, 0, 4);
  std::vector<std::int16_t> junk(4, -1);
  std::memcpy(other.data() + kRawHeaderBytes, junk.data(), 8);  // same indices, other samples
  CHECK(a->accept(dup, 1, 1) == AcceptStatus::duplicate);
  SUBCASE("a packet overlapping part of what was received is a duplicate too") {
    CHECK(a->accept(raw(other, 2, 4), 1, 1) == AcceptStatus::duplicate);
  }
  feed(*a, {4}, 4);
  REQUIRE(sink.blocks().size() == 1);
  CHECK(sink.blocks()[0] == ramp(0, 8));
  CHECK(a->counters().duplicates >= 1);
  CHECK(a->counters().lost_samples == 0);
}

TEST_CASE("a duplicate of the packet that completed a published block is a duplicate, not late") {
  RecordingSink sink;
  auto a = StreamAssembler::create(config(8, 1), sink);
  REQUIRE(a);
  feed(*a, {0, 4}, 4);
  REQUIRE(sink.blocks().size() == 1);
  feed(*a, {4}, 4);
  CHECK(a->counters().duplicates == 1);
  CHECK(a->counters().late == 0);
  SUBCASE("but a packet for a block that became a gap is late") {
    feed(*a, {12, 16, 20, 24}, 4);  // 8..11 never came: block 1 is a gap
    feed(*a, {8}, 4);
    CHECK(a->counters().late == 1);
    CHECK(a->counters().duplicates == 1);
  }
}

TEST_CASE("a jump far ahead is published as one gap of all the blocks it skipped") {
  RecordingSink sink;
  auto a = StreamAssembler::create(config(8, 1), sink);
  REQUIRE(a);
  feed(*a, {0, 4, 8000, 8004}, 4);
  a->finish();
  std::uint64_t gap_blocks = 0;
  std::size_t gap_events = 0;
  for (const Event& e : sink.events)
    if (e.gap) {
      gap_blocks += e.blocks;
      ++gap_events;
    }
  CHECK(gap_blocks == 999);
  CHECK(gap_events <= 3);  // the jump, the window passing, the block the window still held at the end
  CHECK(a->counters().lost_samples == 999 * 8);
  CHECK(sink.blocks().size() == 1001);
  CHECK(sink.blocks()[1000] == ramp(8000, 8));
}

TEST_CASE("a source that restarts its index far behind starts the stream afresh") {
  RecordingSink sink;
  auto a = StreamAssembler::create(config(8), sink);
  REQUIRE(a);
  feed(*a, packet_starts(4, 4, 1'000'000), 4);
  feed(*a, packet_starts(4, 4, 0), 4);
  a->finish();
  CHECK(a->counters().resyncs == 1);
  CHECK(a->counters().late == 0);
  const auto blocks = sink.blocks();
  REQUIRE(blocks.size() == 4);
  CHECK(blocks[1] == ramp(1'000'008, 8));
  CHECK(blocks[2] == ramp(0, 8));
}

TEST_CASE("indices at the far ends of the 64-bit range restart the stream instead of overflowing") {
  RecordingSink sink;
  auto a = StreamAssembler::create(config(8), sink);
  REQUIRE(a);
  feed(*a, {0x7FFF'FFFF'FFFF'FFF0ULL, 0x7FFF'FFFF'FFFF'FFF4ULL}, 4);  // a block just below 2^63
  feed(*a, {0xC000'0000'0000'0000ULL}, 4);                             // 2^62 ahead: a restart, not a huge gap
  feed(*a, {0xFFFF'FFFF'FFFF'FFF8ULL, 0xFFFF'FFFF'FFFF'FFFCULL, 0, 4, 8, 12}, 4);  // wraps past 2^64 in order
  a->finish();
  CHECK(a->counters().resyncs == 2);
  CHECK(a->counters().lost_samples == 0);
  CHECK(a->counters().gap_blocks == 0);
  const auto blocks = sink.blocks();
  REQUIRE(blocks.size() == 5);
  CHECK(blocks[2] == ramp(0xFFFF'FFFF'FFFF'FFF8ULL, 8));
  CHECK(blocks[3] == ramp(0, 8));
}

TEST_CASE("losing exactly 16 VITA 49 packets is counted, though the 4-bit count comes back the same") {
  for (const Tsf tsf : {Tsf::sample_count, Tsf::real_time_ps, Tsf::free_running}) {
    CAPTURE(static_cast<int>(tsf));
    RecordingSink sink;
    auto a = StreamAssembler::create(config(8, 1), sink);
    REQUIRE(a);
    std::vector<std::byte> buf;
    std::uint64_t count = 0;
    for (std::uint64_t i = 0; i < 40; ++i) {
      Vita49Fields f;
      f.stream_id = 5;
      f.count = static_cast<std::uint8_t>(count++ & 0xF);
      f.tsi = Tsi::utc;
      f.tsf = tsf;
      const std::uint64_t first = i * 4;  // 4 samples a packet at 1000 Hz
      f.integer_ts = static_cast<std::uint32_t>(1'700'000'000 + first / 1000);
      f.fractional_ts = tsf == Tsf::sample_count    ? first % 1000
                        : tsf == Tsf::real_time_ps ? (first % 1000) * 1'000'000'000ULL
                                                   : first;
      if (i >= 10 && i < 26) continue;  // 16 packets: the next one carries the count we expect
      (void)a->accept(vita(buf, f, first, 4), 1, 1);
    }
    a->finish();
    CHECK(a->counters().lost_samples == 64);
    CHECK(a->counters().gap_blocks == 8);
    const auto blocks = sink.blocks();
    REQUIRE(blocks.size() == 20);
    CHECK(blocks[4] == ramp(32, 8));
    CHECK(blocks[5].empty());   // samples 40..103: blocks 5 to 12
    CHECK(blocks[12].empty());
    CHECK(blocks[13] == ramp(104, 8));
  }
}

TEST_CASE("VITA 49 samples arrive big-endian and are published in host order, stamped from the packet") {
  RecordingSink sink;
  auto a = StreamAssembler::create(config(4), sink);
  REQUIRE(a);
  std::vector<std::byte> buf;
  Vita49Fields f;
  f.tsi = Tsi::utc;
  f.tsf = Tsf::real_time_ps;
  f.integer_ts = 1'700'000'000;
  f.fractional_ts = 250'000'000'000ULL;  // 0.25 s
  (void)a->accept(vita(buf, f, 0, 6), 7, 9);  // block 0 whole, block 1 half
  f.fractional_ts += 6'000'000'000ULL;  // 6 samples at 1000 Hz later
  (void)a->accept(vita(buf, f, 6, 2), 7, 9);
  REQUIRE(sink.events.size() == 2);
  CHECK(sink.events[0].samples == ramp(0, 4));
  CHECK(sink.events[0].realtime_ns == 1'700'000'000'250'000'000ULL);
  CHECK(sink.events[0].flags == kBlockPacketTimeFlag);
  CHECK(sink.events[0].monotonic_ns == 9);
  CHECK(sink.events[1].samples == ramp(4, 4));
  CHECK(sink.events[1].realtime_ns == 1'700'000'000'254'000'000ULL);  // 4 samples into the first packet
  CHECK(a->clock_source() == ClockSource::packet);
  CHECK(a->clock_text().find("utc") != std::string::npos);
}

TEST_CASE("without packet timestamps blocks carry the receive time and VITA 49 packets follow each other") {
  RecordingSink sink;
  auto a = StreamAssembler::create(config(4), sink);
  REQUIRE(a);
  std::vector<std::byte> buf;
  Vita49Fields f;
  (void)a->accept(vita(buf, f, 0, 4), 111, 222);
  f.count = 1;  // the next packet: placed by its count
  (void)a->accept(vita(buf, f, 4, 4), 333, 444);
  REQUIRE(sink.events.size() == 2);
  CHECK(sink.events[1].samples == ramp(4, 4));
  CHECK(sink.events[1].realtime_ns == 333);
  CHECK(sink.events[1].flags == 0);
  CHECK(a->clock_source() == ClockSource::receive);

  SUBCASE("a raw packet without timestamp_ns also stamps the receive time") {
    RecordingSink raw_sink;
    auto r = StreamAssembler::create(config(4), raw_sink);
    REQUIRE(r);
    (void)r->accept(raw(buf, 0, 4), 55, 66);
    REQUIRE(raw_sink.events.size() == 1);
    CHECK(raw_sink.events[0].realtime_ns == 55);
    (void)r->accept(raw(buf, 4, 4, 1'000), 55, 66);
    CHECK(raw_sink.events[1].realtime_ns == 1'000);
    CHECK(raw_sink.events[1].flags == kBlockPacketTimeFlag);
  }
}

TEST_CASE("raw packets of another dtype and packets larger than configured are refused and counted") {
  RecordingSink sink;
  StreamConfig c = config(8);
  c.max_packet_samples = 4;
  auto a = StreamAssembler::create(c, sink);
  REQUIRE(a);
  std::vector<std::byte> buf;
  CHECK(a->accept(raw(buf, 0, 5), 1, 1) == AcceptStatus::oversized);
  const std::array<float, 2> f{1, 2};
  buf.resize(64);
  RawFields fields;
  const std::size_t n = encode_raw(fields, Dtype::f32, std::as_bytes(std::span(f)), buf);
  PacketView v;
  REQUIRE(decode_raw(std::span(buf.data(), n), v) == PacketStatus::ok);
  CHECK(a->accept(v, 1, 1) == AcceptStatus::dtype_mismatch);
  CHECK(a->counters().oversized == 1);
  CHECK(a->counters().dtype_mismatch == 1);
  CHECK(sink.events.empty());
}

TEST_CASE("more disjoint ranges in a block than can be tracked are refused as overflow") {
  RecordingSink sink;
  auto a = StreamAssembler::create(config(128), sink);
  REQUIRE(a);
  std::vector<std::uint64_t> odd;
  for (std::uint64_t i = 0; i <= kUdpMaxFragments; ++i) odd.push_back(2 * i);
  feed(*a, odd, 1);
  CHECK(a->counters().overflow == 1);
  feed(*a, {1}, 1);  // merging two ranges frees one
  CHECK(a->counters().overflow == 1);
  feed(*a, {2 * kUdpMaxFragments}, 1);
  CHECK(a->counters().overflow == 1);
  CHECK(a->counters().duplicates == 0);
}

TEST_CASE("a complete block a full lossless reader refuses is counted dropped, not lost") {
  RecordingSink sink;
  sink.refuse = true;
  auto a = StreamAssembler::create(config(4), sink);
  REQUIRE(a);
  feed(*a, {0, 4}, 4);
  CHECK(a->counters().blocks_dropped == 2);
  CHECK(a->counters().lost_samples == 0);
}

TEST_CASE("bad configurations are refused with the reason") {
  RecordingSink sink;
  StreamConfig c = config(0);
  CHECK(StreamAssembler::create(c, sink).error().what.find("block") != std::string::npos);
  c = config(8);
  c.rate_hz = 0;
  CHECK(StreamAssembler::create(c, sink).error().what.find("rate") != std::string::npos);
  c = config(8);
  c.reorder_blocks = kUdpMaxReorderBlocks + 1;
  CHECK(StreamAssembler::create(c, sink).error().what.find("reorder") != std::string::npos);
}

}  // TEST_SUITE

// The stream assembler at the edges a real digitizer reaches: placement by the packet count when
// there is no fractional timestamp, a corrupt timestamp, a payload of the wrong sample width, late
// duplicates, a source that restarts, and who lost each missing packet (the gap reasons and the
// packet ledger).
#include "assembler_harness.hpp"

using namespace weir::acq;
using namespace weir::test::udp;
using weir::core::Dtype;
using weir::core::GapReason;

namespace {

// A VITA 49 packet of 4 samples, packet k, with the sample-count timestamp (1000 Hz) of packet stamp_k.
PacketView timed(std::vector<std::byte>& buf, std::uint64_t k, std::uint64_t stamp_k) {
  Vita49Fields f;
  f.stream_id = 5;
  f.count = static_cast<std::uint8_t>(k & 0xF);
  f.tsi = Tsi::utc;
  f.tsf = Tsf::sample_count;
  const std::uint64_t at = stamp_k * 4;
  f.integer_ts = static_cast<std::uint32_t>(1'700'000'000 + at / 1000);
  f.fractional_ts = at % 1000;
  return vita(buf, f, k * 4, 4);
}

// Packet k of 4 samples without a fractional timestamp (TSI utc seconds when `seconds`).
PacketView counted(std::vector<std::byte>& buf, std::uint64_t k, bool seconds = false) {
  Vita49Fields f;
  f.stream_id = 5;
  f.count = static_cast<std::uint8_t>(k & 0xF);
  if (seconds) {
    f.tsi = Tsi::utc;
    f.integer_ts = static_cast<std::uint32_t>(1'700'000'000 + k * 4 / 1000);
  }
  return vita(buf, f, k * 4, 4);
}

void expect_ramp(const RecordingSink& sink, const std::vector<bool>& present) {
  const auto blocks = sink.blocks();
  REQUIRE(blocks.size() == present.size());
  for (std::size_t b = 0; b < present.size(); ++b) {
    CAPTURE(b);
    if (present[b])
      CHECK(blocks[b] == ramp(b * 4, 4));
    else
      CHECK(blocks[b].empty());
  }
}

}  // namespace

TEST_SUITE("acquisition.udp.stream_accounting") {

TEST_CASE("without a fractional timestamp the 4-bit count places packets: losses, a swap, a resend") {
  RecordingSink sink;
  auto a = StreamAssembler::create(config(4, 2), sink);
  REQUIRE(a);
  std::vector<std::byte> buf;
  // 0 1 _ _ _ 5 7 6 8 8(again) 9 : three lost, a swap, a duplicate sent at once
  for (const std::uint64_t k : {0, 1, 5, 7, 6, 8, 8, 9}) (void)a->accept(counted(buf, k), 1, 1);
  a->finish();
  expect_ramp(sink, {true, true, false, false, false, true, true, true, true, true});
  const StreamCounters& c = a->counters();
  CHECK(c.source_loss == 3);
  CHECK(c.duplicates == 1);
  CHECK(c.late == 0);
  CHECK(c.recorded == 7);
  CHECK(sink.gaps(GapReason::source_loss) == 3);
}

TEST_CASE("without a fractional timestamp up to 15 lost packets in a row are placed exactly") {
  for (const std::uint64_t lost : {1, 2, 13, 14, 15}) {
    CAPTURE(lost);
    RecordingSink sink;
    auto a = StreamAssembler::create(config(4, 2), sink);
    REQUIRE(a);
    std::vector<std::byte> buf;
    (void)a->accept(counted(buf, 0), 1, 1);
    (void)a->accept(counted(buf, 1), 1, 1);
    CHECK(a->accept(counted(buf, 1), 1, 1) == AcceptStatus::duplicate);  // the newest again: same count, same samples
    for (std::uint64_t k = 2 + lost; k < 8 + lost; ++k) (void)a->accept(counted(buf, k), 1, 1);
    a->finish();
    CHECK(a->counters().source_loss == lost);
    CHECK(a->counters().duplicates == 1);
    CHECK(a->counters().late == 0);
    std::vector<bool> present(8 + lost, true);
    for (std::uint64_t k = 2; k < 2 + lost; ++k) present[k] = false;
    expect_ramp(sink, present);
  }
}

TEST_CASE("integer seconds without a fraction place a packet after a long outage where the seconds allow") {
  RecordingSink sink;
  auto a = StreamAssembler::create(config(4, 1), sink);
  REQUIRE(a);
  std::vector<std::byte> buf;
  for (std::uint64_t k = 0; k < 10; ++k) (void)a->accept(counted(buf, k, true), 1, 1);
  // 3 s of silence (750 packets of 4 samples at 1000 Hz), then the stream goes on: the count alone
  // would put packet 760 a few packets on; the seconds say at least 2 s (500 packets) on.
  for (std::uint64_t k = 760; k < 770; ++k) (void)a->accept(counted(buf, k, true), 1, 1);
  a->finish();
  const StreamCounters& c = a->counters();
  CHECK(c.recorded == 20);
  CHECK(c.source_loss % 16 == 750 % 16);  // the count's part is exact
  CHECK(c.source_loss >= 750 - 250);      // the seconds': within one second
  CHECK(c.source_loss <= 750);
}

TEST_CASE("one packet stamped 1000 blocks ahead is one bad packet: its slot a malformed gap, nothing else lost") {
  RecordingSink sink;
  auto a = StreamAssembler::create(config(4, 2), sink);
  REQUIRE(a);
  std::vector<std::byte> buf;
  for (std::uint64_t k = 0; k < 2000; ++k) {
    const std::uint64_t stamp = k == 500 ? k + 1000 : k;  // the count of packet 500 says it is the next one
    const AcceptStatus s = a->accept(timed(buf, k, stamp), 1, 1);
    if (k == 500) CHECK(s == AcceptStatus::bad_timestamp);
  }
  a->finish();
  const StreamCounters& c = a->counters();
  CHECK(c.bad_timestamp == 1);
  CHECK(c.late == 0);
  CHECK(c.duplicates == 0);
  CHECK(c.recorded == 1999);
  CHECK(c.source_loss == 0);
  CHECK(c.malformed_missing == 1);
  CHECK(c.gap_blocks == 1);
  CHECK(sink.gaps(GapReason::malformed) == 1);
  std::vector<bool> present(2000, true);
  present[500] = false;
  expect_ramp(sink, present);
}

TEST_CASE("a source that restarts its clock while its count goes on is followed after four packets") {
  RecordingSink sink;
  auto a = StreamAssembler::create(config(4, 1), sink);
  REQUIRE(a);
  std::vector<std::byte> buf;
  for (std::uint64_t k = 0; k < 10; ++k) (void)a->accept(timed(buf, k, k), 1, 1);
  // A jump of 1,000,003 packets: its count (+1) disagrees with it (+1,000,004 is 4 mod 16, not 1).
  for (std::uint64_t k = 10; k < 20; ++k) (void)a->accept(timed(buf, k, k + 1'000'003), 1, 1);
  a->finish();
  const StreamCounters& c = a->counters();
  CHECK(c.bad_timestamp == kUdpBadRunResync - 1);
  CHECK(c.resyncs == 1);
  CHECK(c.recorded == 20 - (kUdpBadRunResync - 1));
  CHECK(c.gap_blocks == 0);
}

TEST_CASE("32-bit samples sent into a 16-bit channel are refused as width_mismatch, never published") {
  RecordingSink sink;
  auto a = StreamAssembler::create(config(8, 1), sink);
  REQUIRE(a);
  std::vector<std::byte> buf(256);
  for (std::uint64_t k = 0; k < 20; ++k) {
    Vita49Fields f;
    f.stream_id = 5;
    f.count = static_cast<std::uint8_t>(k & 0xF);
    f.tsf = Tsf::free_running;
    f.fractional_ts = k * 4;  // 4 samples a packet, each 32 bits: 8 i16 "samples" to the channel
    std::array<std::int32_t, 4> wide{};
    for (std::size_t i = 0; i < wide.size(); ++i) wide[i] = static_cast<std::int32_t>(k * 4 + i);
    buf.resize(256);
    const std::size_t n = encode_vita49(f, Dtype::i32, std::as_bytes(std::span(wide)), buf);
    REQUIRE(n > 0);
    PacketView v;
    REQUIRE(decode_vita49(std::span(buf.data(), n), Dtype::i16, v) == PacketStatus::ok);
    REQUIRE(v.samples == 8);
    (void)a->accept(v, 1, 1);
  }
  a->finish();
  CHECK(a->counters().width_mismatch == 20);
  CHECK(a->counters().recorded == 0);
  CHECK(sink.events.empty());
}

TEST_CASE("a packet of another width in a running stream is refused and its slot is a malformed gap") {
  RecordingSink sink;
  auto a = StreamAssembler::create(config(4, 1), sink);
  REQUIRE(a);
  std::vector<std::byte> buf;
  for (std::uint64_t k = 0; k < 10; ++k) {
    if (k == 4) {
      Vita49Fields f;
      f.stream_id = 5;
      f.count = 4;
      f.tsi = Tsi::utc;
      f.tsf = Tsf::sample_count;
      f.integer_ts = 1'700'000'000;
      f.fractional_ts = 16;
      (void)a->accept(vita(buf, f, 16, 8), 1, 1);  // twice the samples at the same timestamp step
      continue;
    }
    (void)a->accept(timed(buf, k, k), 1, 1);
  }
  a->finish();
  CHECK(a->counters().width_mismatch == 1);
  CHECK(sink.gaps(GapReason::malformed) == 1);
  CHECK(a->counters().source_loss == 0);
  expect_ramp(sink, {true, true, true, true, false, true, true, true, true, true});
}

TEST_CASE("a duplicate 130 blocks later is a duplicate, not late; a packet of a gap that late is late") {
  RecordingSink sink;
  auto a = StreamAssembler::create(config(4, 2), sink);
  REQUIRE(a);
  std::vector<std::byte> buf;
  for (std::uint64_t k = 0; k < 300; ++k) {
    if (k != 20) (void)a->accept(raw(buf, k * 4, 4), 1, 1);
    if (k == 150) {
      CHECK(a->accept(raw(buf, 10 * 4, 4), 1, 1) == AcceptStatus::duplicate);
      CHECK(a->accept(raw(buf, 20 * 4, 4), 1, 1) == AcceptStatus::late);
    }
  }
  a->finish();
  const StreamCounters& c = a->counters();
  CHECK(c.duplicates == 1);
  CHECK(c.late == 1);
  CHECK(c.source_loss == 0);  // the late one was missing, not lost
  CHECK(c.missing_packets == 1);
}

TEST_CASE("missing packets are blamed on the kernel only as far as the socket dropped meanwhile") {
  PortDrops port;
  RecordingSink sink;
  auto a = StreamAssembler::create(config(4, 0), sink, &port);
  REQUIRE(a);
  std::vector<std::byte> buf;
  for (std::uint64_t k = 0; k < 5; ++k) (void)a->accept(raw(buf, k * 4, 4), 1, 1);
  port.kernel += 3;  // the socket dropped three datagrams, then five packets are missing
  for (std::uint64_t k = 10; k < 15; ++k) (void)a->accept(raw(buf, k * 4, 4), 1, 1);
  port.refused += 1;  // one datagram refused, then one packet missing
  for (std::uint64_t k = 16; k < 20; ++k) (void)a->accept(raw(buf, k * 4, 4), 1, 1);
  a->finish();
  const StreamCounters& c = a->counters();
  CHECK(c.kernel_drop == 3);
  CHECK(c.source_loss == 2);
  CHECK(c.malformed_missing == 1);
  CHECK(port.kernel_claimed == 3);
  CHECK(port.refused_claimed == 1);
  CHECK(sink.gaps(GapReason::kernel_drop) == 3);
  CHECK(sink.gaps(GapReason::source_loss) == 2);
  CHECK(sink.gaps(GapReason::malformed) == 1);
  CHECK(c.missing_packets == c.kernel_drop + c.source_loss + c.malformed_missing);
}

TEST_CASE("a run of lost packets is one gap, not one per block") {
  RecordingSink sink;
  auto a = StreamAssembler::create(config(4, 1), sink);
  REQUIRE(a);
  feed(*a, {0, 4, 408, 412}, 4);  // packets 2 to 101 lost
  a->finish();
  std::size_t gap_events = 0;
  for (const Event& e : sink.events) gap_events += e.gap ? 1 : 0;
  CHECK(gap_events == 1);
  CHECK(sink.gaps(GapReason::source_loss) == 100);
  CHECK(a->counters().source_loss == 100);
}

TEST_CASE("a horizon no larger than the reorder window is refused") {
  RecordingSink sink;
  StreamConfig c = config(8, 4);
  c.horizon_blocks = 4;
  CHECK(StreamAssembler::create(c, sink).error().what.find("horizon") != std::string::npos);
}

}  // TEST_SUITE

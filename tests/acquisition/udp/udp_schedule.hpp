#pragma once
// Random packet schedules for the UDP accounting property test: what a digitizer sends (VITA 49
// with or without a fractional timestamp, or the raw format; one or two streams), which packets it
// loses, corrupts, reorders or repeats, and what a receiver must make of it. One seed gives one
// schedule, whatever else runs: a failing schedule is rerun from its seed alone.
//
// Faults, each of one stream's packets (k = 0, 1, ... in the order the digitizer made them):
//   lost     never put on the wire (a source loss); runs of any length (VITA 49 without a fractional
//            timestamp: what its 4-bit count can tell, README "Streams, blocks and gaps")
//   corrupt  sent in its place with a header the decoder refuses (no stream can be known from it)
//   jump     sent in its place with a timestamp (raw: first_sample) beyond the horizon that its
//            packet count contradicts: one bad packet
//   width    sent in its place with 32-bit samples (raw: dtype i32): a width the i16 channel lacks
// and, of the packets sent whole: delayed (reordered) within the reorder window or beyond it, and
// duplicated (a copy at once, or up to 200 packets later; without TSF only the newest packet, at
// once, for that is all its count can tell). Burst phases, sent at full speed into a
// small receive buffer so that the kernel drops (TSF and raw only: without TSF a run of 16 drops
// cannot be placed), hold clean packets in order (source losses only):
// a kernel drop in the same inter-arrival window as another fault is a documented ambiguity of the
// split between terms, never of their sum. With two streams, a corrupt packet of one stream is never
// left in a window where the other stream has a source loss, for the same reason.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace weir::test::sched {

enum class Format : std::uint8_t { vita_tsf, vita_no_tsf, raw };
enum class Fate : std::uint8_t { sent, lost, corrupt, jump, width };

struct Datagram {
  std::uint32_t stream = 0;     // index into Schedule::streams
  std::uint64_t k = 0;          // the packet it carries (or a copy of, or stands in for)
  bool duplicate = false;       // an extra copy of packet k
  std::uint32_t phase = 0;
  std::vector<std::byte> bytes;
};

struct Phase {
  bool burst = false;           // sent at once, then the receiver is let drain
};

struct StreamPlan {
  std::uint32_t id = 0;         // the stream id on the wire
  std::vector<Fate> fate;       // per packet k
  std::vector<std::uint32_t> delay;  // per packet k: how many of its successors go before it (0: none)
  std::vector<std::string> corrupt_reason;  // per corrupt packet k: the PacketStatus name it must get
  std::uint64_t duplicates = 0;
  std::uint64_t predicted_late = 0;  // packets that arrive after their block must have closed
};

struct Schedule {
  std::uint64_t seed = 0;
  Format format = Format::raw;
  unsigned tsi = 0, tsf = 0;    // VITA 49 timestamp kinds
  bool class_id = false, trailer = false;
  std::uint32_t packet_samples = 0;   // P
  std::uint32_t packets_per_block = 1;
  std::uint32_t reorder_blocks = 0;
  std::uint32_t horizon_blocks = 0;   // 0: the driver's default
  double rate_hz = 0;
  bool small_rcvbuf = false;          // the burst schedules'
  std::uint32_t batch = 32;
  std::vector<Phase> phases;
  std::vector<StreamPlan> streams;
  std::vector<Datagram> wire;         // in the order they are sent
  bool beyond_window = false;         // some packet is delayed past the reorder window
  std::uint32_t repairs = 0;          // corrupt packets put back whole (the two-stream rule above)

  [[nodiscard]] std::uint32_t block_samples() const { return packet_samples * packets_per_block; }
  [[nodiscard]] std::uint64_t packets(std::size_t stream) const { return streams[stream].fate.size(); }
  [[nodiscard]] std::uint64_t count(std::size_t stream, Fate f) const;
  [[nodiscard]] std::uint64_t count(Fate f) const;
  [[nodiscard]] std::uint64_t duplicates() const;
  [[nodiscard]] std::uint64_t sent() const;  // every packet made, lost ones included, plus every copy
  [[nodiscard]] std::string describe() const;
};

/// The schedule of `seed`: its format is seed % 3 (vita_tsf, vita_no_tsf, raw).
[[nodiscard]] Schedule make_schedule(std::uint64_t seed);

}  // namespace weir::test::sched

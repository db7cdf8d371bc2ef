#pragma once
// The stream assembler: pure logic between decoded packets and a channel's blocks (no sockets, no
// arena), one per stream.
//
// Placement. Every packet is placed by the stream index of its first sample: raw packets carry it
// (first_sample); VITA 49 packets give it through their timestamps: a sample-count or free-running
// fractional timestamp is the index (plus integer seconds x rate when TSI is set), a picosecond
// timestamp gives it as (time - time of the first packet) x rate, rounded. A VITA 49 packet without
// a fractional timestamp is placed by its 4-bit packet count: a count step of d from the newest
// packet is d packets on (d - 1 lost), except that a step of 16 - k, for k up to the reorder
// window (in packets, at most 7), is k packets back when that place is a hole (a late packet); a
// step of 0 is the newest packet again (a duplicate) when its payload's ends match, else 16 packets
// on. So up to 15 packets lost in a row are placed exactly; 16 or more only as far as TSI seconds
// tell: a count placement the seconds prove too early is moved on by whole wraps of 16 until it fits.
//
// Plausibility. A packet whose index lies more than `horizon_blocks` blocks from where its packet
// count puts it (raw: the 64-bit sequence, exactly; VITA 49: the 4-bit count, modulo 16) is one bad
// packet (`bad_timestamp`): never placed, never a gap but its own slot's. Four bad packets in a row
// that agree with each other are a source that restarted: the stream starts afresh on the fourth.
// A VITA 49 stream learns its step (samples per packet) from the timestamps of two consecutive
// packets (the first packet waits for the second); a packet of another sample count is a sample
// width the channel does not have (`width_mismatch`): never placed.
//
// Blocks. The first packet placed starts the stream: block b holds stream samples
// [start + b*N, start + (b+1)*N) for N samples per block. Open blocks are staged in a small
// pre-allocated ring (reorder window + the largest packet's span); a packet fills its ranges there
// (byte order converted while copying). The oldest open block is closed when it is complete
// (published) or when data more than `reorder_blocks` blocks past its end has arrived (a packet
// displaced by up to `reorder_blocks` blocks still lands): then it is published as a gap
// (BlockSink::skip, run-length), its missing samples counted `lost_samples` and the samples it did
// get `discarded_samples`. A packet for a block already closed is a `duplicate` when every packet
// slot it covers had been received (history: kUdpHistoryBlocks blocks), else `late`; a packet far
// behind the history or absurdly far ahead, agreeing with its count, is a source that restarted
// (`resyncs`). Index arithmetic is modulo 2^64, so hostile indices and timestamps overflow nothing.
//
// Accounting (packets). Every packet of the stream is recorded (placed), duplicate, late or bad, and
// every packet missing from the stream is counted once, under the first of: a bad packet of this
// stream or a datagram of no known stream refused meanwhile (malformed), a kernel drop of the
// socket meanwhile (kernel_drop), else source_loss. Gap blocks carry the same reason. A late packet
// takes its packet back from those terms. The port's counts live in PortDrops, shared by its streams.
//
// Time. A block's stamp is its first sample's time from the packet clock when the packet has one
// (raw timestamp_ns; VITA 49 TSI utc or gps with a fractional part), else the time the packet was
// received; blocks stamped from the packet clock carry kBlockPacketTimeFlag.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "weir/core/arena_layout.hpp"
#include "weir/core/error.hpp"
#include "weir/core/gap_reason.hpp"
#include "weir/udp/packet.hpp"
#include "weir/udp/udp_limits.hpp"

namespace weir::acq {

/// BlockHeader::flags bit 0 of a UDP block: its stamp is the packet clock's, not the receive time
/// (core's kBlockSourceTimeFlag, which recorders read).
inline constexpr std::uint32_t kBlockPacketTimeFlag = core::kBlockSourceTimeFlag;

/// Where finished blocks go: a channel writer in the driver, a recording sink in tests.
class BlockSink {
 public:
  virtual ~BlockSink() = default;
  /// Publishes `samples` samples (host order) as the next block. false: dropped at the source
  /// (a full lossless reader). Hot path: no allocation, no throw.
  virtual bool publish(std::span<const std::byte> samples, std::uint32_t count, std::uint64_t realtime_ns,
                       std::uint64_t monotonic_ns, std::uint32_t flags) noexcept = 0;
  /// Publishes `blocks` gap blocks (ChannelWriter::skip). Hot path.
  virtual void skip(std::uint64_t blocks, core::GapReason reason) noexcept = 0;

  /// The next block's slot, for a block that arrives whole and in order to be written in place
  /// (ChannelWriter::claim): ok with `slot` set (then commit()), dropped (a full lossless reader: lost
  /// at the source), or unsupported (the assembler stages the block and calls publish()). Hot path.
  enum class Claim : std::uint8_t { ok, dropped, unsupported };
  virtual Claim claim(std::span<std::byte>& slot) noexcept {
    (void)slot;
    return Claim::unsupported;
  }
  /// Publishes the slot claim() gave, filled with `count` samples (host order). Hot path.
  virtual void commit(std::uint32_t count, std::uint64_t realtime_ns, std::uint64_t monotonic_ns,
                      std::uint32_t flags) noexcept {
    (void)count, (void)realtime_ns, (void)monotonic_ns, (void)flags;
  }
};

/// Where a stream's block stamps come from.
enum class ClockSource : std::uint8_t { unknown = 0, packet = 1, receive = 2 };

struct StreamConfig {
  core::Dtype dtype = core::Dtype::i16;
  std::uint32_t samples_per_block = 0;
  double rate_hz = 0;                                   // the channel's: VITA 49 times -> sample indices
  std::uint32_t reorder_blocks = kUdpDefaultReorderBlocks;
  std::uint32_t max_packet_samples = 0;                 // the largest packet accepted (sizes the staging ring)
  std::uint32_t horizon_blocks = kUdpDefaultHorizonBlocks;  // a timestamp this far from its count is checked
};

/// What the socket of a port saw, shared by its streams: the kernel's drops and the datagrams refused
/// before a stream was known, and how many of each a stream's missing packets have claimed.
struct PortDrops {
  std::uint64_t kernel = 0;            // the socket's drop counter (SO_RXQ_OVFL / SK_MEMINFO_DROPS)
  std::uint64_t kernel_claimed = 0;    // ... explained as missing packets of a stream
  std::uint64_t refused = 0;           // datagrams refused by the decoder or of no known stream
  std::uint64_t refused_claimed = 0;   // ... explained as missing packets of a stream
  // Source losses counted while a refusal the hole could have been was taken by another stream's
  // hole, and how many of them a late packet has since shown to be that refusal after all: the
  // part's source_loss is the streams' less refused_moved.
  std::uint64_t refused_starved = 0;
  std::uint64_t refused_moved = 0;
};

/// What one stream got; plain counters, read by the thread that feeds the assembler.
struct StreamCounters {
  std::uint64_t packets = 0;            // datagrams of this stream that decoded
  std::uint64_t bytes = 0;              // their bytes, headers included
  std::uint64_t samples = 0;            // samples placed
  std::uint64_t lost_samples = 0;       // samples that never arrived in time: exact
  std::uint64_t discarded_samples = 0;  // samples received into blocks that became gaps
  std::uint64_t reordered = 0;          // packets placed before data already seen
  std::uint64_t late = 0;               // packets for blocks already closed as gaps
  std::uint64_t duplicates = 0;         // packets overlapping samples already received
  std::uint64_t overflow = 0;           // packets dropped: more than kUdpMaxFragments ranges in a block
  std::uint64_t oversized = 0;          // packets larger than max_packet_samples
  std::uint64_t dtype_mismatch = 0;     // raw packets whose dtype is not the channel's
  std::uint64_t bad_timestamp = 0;      // packets whose timestamp their packet count contradicts
  std::uint64_t width_mismatch = 0;     // VITA 49 packets whose sample count is not the stream's step
  std::uint64_t resyncs = 0;            // restarts of the stream index
  std::uint64_t blocks_published = 0;
  std::uint64_t gap_blocks = 0;
  std::uint64_t blocks_dropped = 0;     // complete blocks a full lossless reader made the sink drop
  // The packet ledger: packets = recorded + duplicates + late + bad(); missing packets =
  // source_loss + kernel_drop + malformed_missing (+ the late ones, taken back from those)
  std::uint64_t recorded = 0;           // packets placed
  std::uint64_t missing_packets = 0;    // packets missing from the stream when their blocks closed
  std::uint64_t source_loss = 0;        // ... the source never delivered
  std::uint64_t kernel_drop = 0;        // ... the kernel dropped (claimed from PortDrops)
  std::uint64_t malformed_missing = 0;  // ... arrived, but refused (this stream's bad packets, the port's refused)
  [[nodiscard]] std::uint64_t bad() const noexcept {
    return overflow + oversized + dtype_mismatch + bad_timestamp + width_mismatch;
  }
};

/// Why accept() did what it did (the counters say the same, summed).
enum class [[nodiscard]] AcceptStatus : std::uint8_t {
  placed, held, late, duplicate, overflow, oversized, dtype_mismatch, bad_timestamp, width_mismatch
};

class StreamAssembler {
 public:
  /// Checks the config (dtype, block, rate, window, packet size) and allocates the staging ring.
  /// Cold path. Thread: any.
  /// `port`: the drops and refusals of the socket the stream arrives on (shared by its streams; a
  /// stream of its own when null), read when a gap is attributed.
  [[nodiscard]] static core::Result<StreamAssembler> create(const StreamConfig& config, BlockSink& sink,
                                                            PortDrops* port = nullptr);

  /// Places one decoded packet of this stream, received at rx_realtime_ns / rx_monotonic_ns, and
  /// publishes every block that closes. Thread: one at a time. Hot path: no allocation, no throw.
  AcceptStatus accept(const PacketView& packet, std::uint64_t rx_realtime_ns, std::uint64_t rx_monotonic_ns) noexcept;

  /// The stream ended: publishes every open block up to the last sample received (the last one
  /// possibly short), holes counted lost and published as gaps. Thread: as accept().
  void finish() noexcept;

  [[nodiscard]] const StreamCounters& counters() const noexcept { return counters_; }
  [[nodiscard]] ClockSource clock_source() const noexcept { return clock_; }
  /// Where the stamps come from, for the `<part>.<channel>.clock` key: "packet: VITA 49 utc, real_time_ps".
  [[nodiscard]] std::string clock_text() const;

 private:
  struct Range {
    std::uint32_t lo = 0, hi = 0;
  };
  struct Open {                          // one staged block
    std::uint32_t filled = 0;
    std::uint32_t fragments = 0;         // used entries of ranges, sorted, disjoint, not touching
    std::uint64_t realtime_ns = 0;
    std::uint64_t monotonic_ns = 0;
    std::uint32_t flags = 0;
    bool stamped = false;
  };
  struct Front {                         // the newest packet placed (highest index)
    bool valid = false;
    std::uint64_t count = 0;             // raw: sequence; VITA 49: the 4-bit count
    std::uint64_t index = 0;             // stream index of its first sample
    std::uint32_t samples = 0;
    std::uint32_t integer_ts = 0;
    std::uint64_t ends = 0;              // its payload's first and last 4 bytes (VITA 49 without TSF: duplicates)
  };
  struct BadRun {                        // consecutive bad_timestamp packets that agree with each other
    std::uint32_t length = 0;
    std::uint32_t unplaced = 0;          // ... of them waiting for any hole (bad_pending_)
    std::uint64_t next_index = 0, next_count = 0;
  };
  struct Split {                         // missing packets by who lost them
    std::uint64_t malformed = 0, kernel = 0, source = 0;
  };
  enum class Position : std::uint8_t { ok, duplicate, restart };

  StreamAssembler(const StreamConfig& config, BlockSink& sink, PortDrops* port, std::uint32_t slots);
  // Placement (stream_position.cpp)
  [[nodiscard]] Position position_of(const PacketView& p, std::uint64_t& index) noexcept;
  [[nodiscard]] bool timestamp_index(const PacketView& p, std::uint64_t& index) noexcept;
  [[nodiscard]] std::uint64_t count_index(const PacketView& p) noexcept;
  [[nodiscard]] bool plausible(const PacketView& p, std::uint64_t index) const noexcept;
  [[nodiscard]] std::uint64_t packet_time_ns(const PacketView& p) const noexcept;
  [[nodiscard]] static bool count_follows(const PacketView& p, std::uint64_t count) noexcept;
  AcceptStatus refuse_timestamp(const PacketView& p, std::uint64_t index) noexcept;
  void advance_front(const PacketView& p, std::uint64_t index) noexcept;
  void hold(const PacketView& p, std::uint64_t index, std::uint64_t rx_realtime_ns, std::uint64_t rx_monotonic_ns) noexcept;
  // Blocks (stream_assembler.cpp)
  AcceptStatus place(const PacketView& p, std::uint64_t index, std::uint64_t rx_realtime_ns,
                     std::uint64_t rx_monotonic_ns) noexcept;
  AcceptStatus behind(const PacketView& p, std::uint64_t first_rel) noexcept;
  [[nodiscard]] bool place_direct(const PacketView& p, std::uint64_t rx_realtime_ns, std::uint64_t rx_monotonic_ns) noexcept;
  void copy_in(std::byte* dst, const std::byte* src, std::size_t bytes, bool big_endian) const noexcept;
  void restart() noexcept;
  void place_held() noexcept;
  void close_oldest() noexcept;
  void advance_to(std::uint64_t block) noexcept;
  void reset_slot(std::uint64_t block) noexcept;
  void remember(std::uint64_t block, std::uint64_t mask) noexcept;
  [[nodiscard]] std::uint64_t received_mask(std::uint64_t block) noexcept;
  [[nodiscard]] bool received(std::uint64_t first_rel, std::uint64_t samples) noexcept;
  // Accounting (stream_ledger.cpp)
  [[nodiscard]] Split claim(std::uint64_t missing_samples, std::uint64_t lo, std::uint64_t hi) noexcept;
  void gap_blocks(std::uint64_t blocks, std::uint64_t missing_samples, std::uint64_t lo, std::uint64_t hi) noexcept;
  [[nodiscard]] std::uint64_t take_bad_slots(std::uint64_t lo, std::uint64_t hi, std::uint64_t most) noexcept;
  bool refuse_packet(const PacketView& p) noexcept;
  void take_back_late() noexcept;
  void pend_gap(std::uint64_t blocks, core::GapReason reason) noexcept;
  void flush_gap() noexcept;
  void mark_port(std::uint64_t first_rel) noexcept;
  void settle_budgets() noexcept;
  [[nodiscard]] PortDrops& port() noexcept { return port_ != nullptr ? *port_ : solo_; }
  [[nodiscard]] std::uint64_t packet_samples() const noexcept;

  [[nodiscard]] Range* ranges(std::uint64_t block) noexcept { return &ranges_[(block % slots_) * kUdpMaxFragments]; }
  [[nodiscard]] std::byte* data(std::uint64_t block) noexcept { return &staging_[(block % slots_) * block_bytes_]; }
  [[nodiscard]] Open& open(std::uint64_t block) noexcept { return open_[block % slots_]; }

  StreamConfig config_;
  BlockSink* sink_;
  PortDrops* port_;
  PortDrops solo_;                        // the port when the stream has one of its own
  std::uint32_t slots_;                   // staged blocks
  std::uint32_t sample_bytes_;
  std::size_t block_bytes_;
  std::uint32_t granule_;                 // samples per bit of a history mask (a block is at most 64 of them)
  std::uint64_t full_mask_;               // every granule of a block received
  std::vector<std::byte> staging_;        // slots_ blocks, allocated once
  std::vector<Open> open_;
  std::vector<Range> ranges_;             // kUdpMaxFragments per slot
  std::vector<std::uint64_t> history_tag_;   // per kUdpHistoryBlocks slot: 1 + the closed block it describes
  std::vector<std::uint64_t> history_mask_;  // ... and which of its granules had been received
  std::uint64_t rate_per_s_;              // the rate as whole samples per second (sample-count timestamps)
  bool started_ = false;
  std::uint64_t start_index_ = 0;         // stream index of block 0's first sample (indices wrap mod 2^64)
  std::uint64_t head_ = 0;                // oldest open block
  std::uint64_t max_end_ = 0;             // one past the highest sample received, relative to start_index_
  std::uint64_t staged_ = 0;              // samples received into the open blocks (holes: max_end_ - head_ * N - staged_)
  // VITA 49: the timestamps the indices are counted from
  bool reference_ = false;
  std::uint32_t first_integer_ts_ = 0;
  std::uint64_t first_fractional_ts_ = 0;
  Tsi tsi_ = Tsi::none;
  Tsf tsf_ = Tsf::none;
  Front front_;
  std::uint32_t step_ = 0;                // VITA 49 with TSF: samples per packet, learned from two packets' timestamps
  BadRun bad_run_;
  // The first packet of a VITA 49 stream with TSF waits here until the second confirms its width
  std::vector<std::byte> held_bytes_;
  PacketView held_;
  std::uint64_t held_index_ = 0, held_rx_realtime_ns_ = 0, held_rx_monotonic_ns_ = 0;
  bool holding_ = false;
  // Accounting: the port's counts up to which its drops and refusals are budgeted or ruled out, the
  // counts at the stream's last kPortMarks newest packets, what came across its holes, and its own
  // refused packets not yet matched to a missing one
  struct PortMark {
    std::uint64_t kernel = 0, refused = 0;
  };
  static constexpr std::size_t kPortMarks = 64;
  std::uint64_t kernel_base_ = 0, refused_base_ = 0;
  std::array<PortMark, kPortMarks> port_marks_{};
  std::uint64_t marks_pushed_ = 0;
  std::uint64_t kernel_budget_ = 0, refused_budget_ = 0;
  std::uint64_t port_refusals_claimed_ = 0;  // of malformed_missing: the port's refusals (the rest this stream's own)
  std::uint64_t bad_pending_ = 0;
  static constexpr std::uint32_t kBadSlots = 16;
  std::array<std::uint64_t, kBadSlots> bad_slot_{};  // refused packets' places (relative), by their counts
  std::uint32_t bad_slots_ = 0;
  std::uint64_t pending_gap_ = 0;         // gap blocks not yet passed to the sink (one run, one reason)
  core::GapReason pending_reason_ = core::GapReason::source_loss;
  PacketFormat format_ = PacketFormat::raw;
  ClockSource clock_ = ClockSource::unknown;
  StreamCounters counters_;
};

}  // namespace weir::acq

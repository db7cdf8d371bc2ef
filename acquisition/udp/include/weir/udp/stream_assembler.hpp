#pragma once
// The stream assembler: pure logic between decoded packets and a channel's blocks (no sockets, no
// arena), one per stream.
//
// Placement. Every packet is placed by the stream index of its first sample: raw packets carry it
// (first_sample); VITA 49 packets give it through their timestamps: a sample-count or free-running
// fractional timestamp is the index (plus integer seconds x rate when TSI is set), a picosecond
// timestamp gives it as (time - time of the first packet) x rate, rounded; a packet without a
// fractional timestamp is placed after the previous one (running count: no loss can be seen then).
// The 4-bit VITA count is never used: it aliases at 16 lost packets.
//
// Blocks. The first packet seen starts the stream: block b holds stream samples
// [start + b*N, start + (b+1)*N) for N samples per block. Open blocks are staged in a small
// pre-allocated ring (reorder window + the largest packet's span); a packet fills its ranges there
// (byte order converted while copying). The oldest open block is closed when it is complete
// (published) or when data `reorder_blocks` blocks past its end has arrived: then it is published as
// a gap (BlockSink::skip), its missing samples counted `lost_samples` and the samples it did get
// `discarded_samples`. So lost_samples is exact, and every consumer counts whole gap blocks.
// A packet for a block already closed is `late` (its samples were counted lost), unless every block
// it touches was published whole (recently: within the staging ring): then it is a `duplicate`, as
// is one overlapping samples already received; one placed before data already seen is `reordered`.
// A packet far behind (kUdpResyncBlocks) or absurdly far ahead (kUdpMaxJumpSamples) means the source
// restarted: the open blocks are closed and the stream starts afresh (`resyncs`). Index arithmetic
// is modulo 2^64, so hostile indices and timestamps cannot overflow anything.
//
// Time. A block's stamp is its first sample's time from the packet clock when the packet has one
// (raw timestamp_ns; VITA 49 TSI utc or gps with a fractional part, or integer seconds alone), else the
// time the packet was received; blocks stamped from the packet clock carry kBlockPacketTimeFlag.
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
};

/// Where a stream's block stamps come from.
enum class ClockSource : std::uint8_t { unknown = 0, packet = 1, receive = 2 };

struct StreamConfig {
  core::Dtype dtype = core::Dtype::i16;
  std::uint32_t samples_per_block = 0;
  double rate_hz = 0;                                   // the channel's: VITA 49 times -> sample indices
  std::uint32_t reorder_blocks = kUdpDefaultReorderBlocks;
  std::uint32_t max_packet_samples = 0;                 // the largest packet accepted (sizes the staging ring)
};

/// What one stream got; plain counters, read by the thread that feeds the assembler.
struct StreamCounters {
  std::uint64_t packets = 0;            // datagrams of this stream that decoded
  std::uint64_t bytes = 0;              // their bytes, headers included
  std::uint64_t samples = 0;            // samples placed
  std::uint64_t lost_samples = 0;       // samples that never arrived in time: exact
  std::uint64_t discarded_samples = 0;  // samples received into blocks that became gaps
  std::uint64_t reordered = 0;          // packets placed before data already seen
  std::uint64_t late = 0;               // packets for blocks already closed
  std::uint64_t duplicates = 0;         // packets overlapping samples already received
  std::uint64_t overflow = 0;           // packets dropped: more than kUdpMaxFragments ranges in a block
  std::uint64_t oversized = 0;          // packets larger than max_packet_samples
  std::uint64_t dtype_mismatch = 0;     // raw packets whose dtype is not the channel's
  std::uint64_t resyncs = 0;            // restarts of the stream index
  std::uint64_t blocks_published = 0;
  std::uint64_t gap_blocks = 0;
  std::uint64_t blocks_dropped = 0;     // complete blocks a full lossless reader made the sink drop
};

/// Why accept() did what it did (the counters say the same, summed).
enum class [[nodiscard]] AcceptStatus : std::uint8_t { placed, late, duplicate, overflow, oversized, dtype_mismatch };

class StreamAssembler {
 public:
  /// Checks the config (dtype, block, rate, window, packet size) and allocates the staging ring.
  /// Cold path. Thread: any.
  [[nodiscard]] static core::Result<StreamAssembler> create(const StreamConfig& config, BlockSink& sink);

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

  StreamAssembler(const StreamConfig& config, BlockSink& sink, std::uint32_t slots);
  [[nodiscard]] bool index_of(const PacketView& p, std::uint64_t& index) noexcept;
  [[nodiscard]] std::uint64_t packet_time_ns(const PacketView& p) const noexcept;
  void close_oldest() noexcept;
  void advance_to(std::uint64_t block) noexcept;
  void reset_slot(std::uint64_t block) noexcept;
  [[nodiscard]] Range* ranges(std::uint64_t block) noexcept { return &ranges_[(block % slots_) * kUdpMaxFragments]; }
  [[nodiscard]] std::byte* data(std::uint64_t block) noexcept { return &staging_[(block % slots_) * block_bytes_]; }
  [[nodiscard]] Open& open(std::uint64_t block) noexcept { return open_[block % slots_]; }

  StreamConfig config_;
  BlockSink* sink_;
  std::uint32_t slots_;                   // staged blocks
  std::uint32_t sample_bytes_;
  std::size_t block_bytes_;
  std::vector<std::byte> staging_;        // slots_ blocks, allocated once
  std::vector<Open> open_;
  std::vector<Range> ranges_;             // kUdpMaxFragments per slot
  std::vector<std::uint64_t> published_;  // per slot: 1 + the last block closed there if it was published whole, else 0
  std::uint64_t rate_per_s_;              // the rate as whole samples per second (sample-count timestamps)
  bool started_ = false;
  std::uint64_t start_index_ = 0;         // stream index of block 0's first sample (indices wrap mod 2^64)
  std::uint64_t head_ = 0;                // oldest open block
  std::uint64_t max_end_ = 0;             // one past the highest sample received, relative to start_index_
  // VITA 49: the first packet's timestamps, and the running index for packets without a fractional one
  std::uint32_t first_integer_ts_ = 0;
  std::uint64_t first_fractional_ts_ = 0;
  std::uint64_t running_index_ = 0;
  Tsi tsi_ = Tsi::none;
  Tsf tsf_ = Tsf::none;
  PacketFormat format_ = PacketFormat::raw;
  ClockSource clock_ = ClockSource::unknown;
  StreamCounters counters_;
};

}  // namespace weir::acq

#pragma once
// The UDP receiver: one socket (IPv4 or IPv6, optionally joined to a multicast group), datagrams
// read in recvmmsg batches into buffers allocated once, decoded in place, routed by stream id to a
// StreamAssembler per channel, and counted in arena keys a few times a second.
//
// Keys (u64 unless said), refreshed every kUdpCounterPeriodNs and at the end:
//   <part>.port                  the UDP port bound (the kernel's pick when asked for port 0)
//   <part>.rcvbuf_bytes          the receive buffer the kernel granted (getsockopt SO_RCVBUF)
//   <part>.accounting.<term>     the packet ledger (UdpLedger): recorded, source_loss, kernel_drop,
//                                malformed, duplicate, late
//   <part>.packets, .bytes       every datagram received, and its bytes
//   <part>.unknown_stream        datagrams of a stream id no channel is mapped to
//   <part>.malformed.<reason>    refused datagrams, per PacketStatus reason
//   <part>.<channel>.packets .bytes .samples .lost .discarded .reordered .late .duplicates
//                    .gap_blocks .blocks .dropped .resyncs .recorded .missing .source_loss
//                    .kernel_drop .malformed .bad_timestamp .width_mismatch .dtype_mismatch
//                    .oversized .overflow .malformed_missing   StreamCounters of the stream
//   <part>.<channel>.clock       text: where the block stamps come from (StreamAssembler::clock_text)
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "weir/core/arena.hpp"
#include "weir/core/arena_layout.hpp"
#include "weir/core/error.hpp"
#include "weir/core/limits.hpp"
#include "weir/udp/packet.hpp"
#include "weir/udp/stream_assembler.hpp"
#include "weir/udp/udp_limits.hpp"

namespace weir::acq {

/// One stream of the port and the channel its samples go to.
struct UdpStream {
  std::uint32_t id = 0;
  std::string channel;
};

struct UdpOptions {
  std::string part = "udp";           // names the keys and every error
  std::string bind;                   // numeric local address; "" any (IPv6 "::" when group is IPv6)
  std::uint16_t port = 0;             // 0: the kernel picks one (see <part>.port)
  std::string group;                  // multicast group to join, "" none
  PacketFormat format = PacketFormat::vita49;
  std::vector<UdpStream> streams;
  std::int64_t rcvbuf_bytes = kUdpDefaultRcvbufBytes;
  std::uint32_t batch = kUdpDefaultBatch;
  int cpu = -1;                       // pin the receiving thread to this CPU, -1 not
  std::uint32_t reorder_blocks = kUdpDefaultReorderBlocks;
  std::uint32_t horizon_blocks = kUdpDefaultHorizonBlocks;  // a timestamp jump past this must agree with the count
  double duration_s = 0;              // stop after this long (0: no limit)
  std::uint64_t max_packets = 0;      // stop after this many datagrams (0: no limit)
  // Channels missing from the arena are created with these when create_missing is set (the
  // standalone command); otherwise a missing channel is refused (a pipeline declares its channels).
  bool create_missing = false;
  core::Dtype dtype = core::Dtype::i16;
  double rate_hz = 0;
  std::uint32_t block_samples = 0;
  std::uint32_t ring_blocks = core::kDefaultRingBlocks;
  core::FullPolicy full_policy = core::FullPolicy::wait;
  std::int64_t wait_timeout_ns = core::kDefaultWriterWaitNs;
};

struct UdpStreamReport {
  std::uint32_t id = 0;
  std::string channel;
  StreamCounters counters;
  std::string clock;
};

/// The part's packet ledger: every datagram sent to the port is counted in exactly one term,
///   sent = recorded + source_loss + kernel_drop + malformed + duplicate + late
/// (README "Accounting" says when the split between source_loss, kernel_drop and malformed can be
/// wrong; the sum cannot). Keys `<part>.accounting.<term>`.
struct UdpLedger {
  std::uint64_t recorded = 0;     // packets whose samples were placed in their stream's blocks
  std::uint64_t source_loss = 0;  // packets missing from a stream that the other terms do not explain
  std::uint64_t kernel_drop = 0;  // datagrams the kernel dropped for a full socket buffer (SK_MEMINFO_DROPS)
  std::uint64_t malformed = 0;    // refused: undecodable, unknown stream, implausible timestamp, wrong width, ...
  std::uint64_t duplicate = 0;    // packets whose samples had been received already
  std::uint64_t late = 0;         // packets whose block had been closed (published as a gap) before they came
};

struct UdpReport {
  std::string part;
  std::uint16_t port = 0;
  std::int64_t rcvbuf_requested = 0;
  std::int64_t rcvbuf_granted = 0;
  bool joined_group = false;
  std::uint64_t datagrams = 0;
  std::uint64_t bytes = 0;
  std::uint64_t kernel_drops = 0;     // the socket's drop counter (SO_RXQ_OVFL, SK_MEMINFO_DROPS)
  std::uint64_t unknown_stream = 0;
  std::uint64_t malformed[kPacketStatusCount] = {};  // by PacketStatus (index 0, ok, stays 0)
  std::uint64_t malformed_total = 0;
  std::uint64_t batches = 0;          // recvmmsg calls that returned datagrams
  double elapsed_s = 0;
  double packets_per_s = 0;
  double bytes_per_s = 0;
  bool stopped = false;               // by the stop flag (else a time or packet limit)
  std::vector<UdpStreamReport> streams;
  UdpLedger ledger;
};

/// Checks the options without a socket or an arena: part, port, streams (ids and channels named
/// once each), batch, reorder window, limits, and the channel settings when create_missing.
/// Errors name the part and the bad input. Thread: any.
[[nodiscard]] core::Result<void> validate(const UdpOptions& options);

/// Receives until `stop`, duration_s or max_packets. Opens (or creates) every channel and becomes
/// its writer, binds the socket (a port in use, a bad address, a group that is not multicast or
/// cannot be joined are refused naming the part and the input), then loops; on `stop` it first
/// drains what the socket still holds. Open blocks are finished at the end. Returns what it got.
/// Thread: the calling thread receives (pinned when options.cpu >= 0); `stop` from any thread or a
/// signal handler (a signal also cuts a wait short).
[[nodiscard]] core::Result<UdpReport> run_udp(const core::Arena& arena, const UdpOptions& options,
                                              const std::atomic<bool>& stop);

/// "vita49" -> PacketFormat::vita49, "raw" -> raw; fails naming the text. Thread: any.
[[nodiscard]] core::Result<PacketFormat> parse_packet_format(std::string_view text);
[[nodiscard]] const char* packet_format_name(PacketFormat format) noexcept;

}  // namespace weir::acq

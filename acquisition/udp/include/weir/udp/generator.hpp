#pragma once
// The UDP load generator behind `weir udpgen`: N streams of VITA 49 or raw packets at a given
// sample rate, paced on absolute CLOCK_MONOTONIC deadlines and sent in sendmmsg batches, with
// injected faults so receivers can be tested without hardware.
//
// Stream s (ids first_stream_id, +1, ...) sends packet k with samples [k*P, (k+1)*P) (P samples a
// packet), sample i being udpgen_sample(id, i) (the ramp), or, with the pulses signal, sample i of the
// simulator's detector pulses as integer ADC codes (udpgen_pulses: +-10 V over the dtype's codes,
// a baseline noise of noise_lsb LSB, seed = seed + id). Faults, drawn from a seeded generator (same seed,
// same faults): a dropped packet is not sent (never a stream's first or last packet: a receiver
// could not see that loss); a reordered packet is held back and sent after the stream's next packet (never the
// first packet; if that next one is dropped, the held one goes in order and does not count as reordered); a duplicated one is sent twice; a malformed packet is an extra datagram (cut
// short, a wrong size field, or a bad magic), never a replacement. `burst` packets of each stream
// go out back to back per pacing tick. Every fault is counted exactly in the report.
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "weir/core/arena_layout.hpp"
#include "weir/core/error.hpp"
#include "weir/udp/packet.hpp"
#include "weir/udp/udp_limits.hpp"

namespace weir::acq {

/// What udpgen's samples are: the checkable ramp, or detector pulses as a digitizer's ADC codes.
enum class UdpGenSignal : std::uint8_t { ramp, pulses };

/// VITA 49 timestamps udpgen sends: TSI utc with a sample-count or a picosecond fraction, or none.
enum class VitaTime : std::uint8_t { count, ps, none };

struct UdpGenOptions {
  std::string dest = "127.0.0.1";     // numeric IPv4 or IPv6 (a multicast group too)
  std::uint16_t port = 0;
  PacketFormat format = PacketFormat::vita49;
  std::uint32_t streams = 1;
  std::uint32_t first_stream_id = 1;
  core::Dtype dtype = core::Dtype::i16;
  UdpGenSignal signal = UdpGenSignal::ramp;
  double noise_lsb = kUdpGenNoiseLsb;          // pulses: baseline noise sigma, in LSB (integer dtypes only)
  double count_rate_hz = kUdpGenCountRateHz;   // pulses: mean counts a second (Poisson)
  double rate_hz = 0;                 // samples per second per stream
  std::uint32_t packet_samples = 0;   // samples per packet
  double duration_s = 0;              // send rate * duration samples per stream ...
  std::uint64_t packets = 0;          // ... or this many packets per stream (exactly one of the two)
  bool fast = false;                  // no pacing
  std::uint32_t burst = 1;            // packets per stream per pacing tick
  std::uint32_t batch = kUdpDefaultBatch;
  double loss = 0;                    // probability a packet is dropped
  std::uint64_t drop_every = 0;       // drop every Nth packet of each stream (0: none)
  double reorder = 0;                 // probability a packet is held back behind the next
  double duplicate = 0;               // probability a packet is sent twice
  double malformed = 0;               // probability an extra malformed datagram follows a packet
  std::uint64_t seed = 1;
  VitaTime vita_time = VitaTime::count;
  bool raw_timestamps = true;         // raw: fill timestamp_ns
  int multicast_ttl = 1;
};

struct UdpGenStreamReport {
  std::uint32_t id = 0;
  std::uint64_t packets = 0;          // data packets generated (sent or dropped)
  std::uint64_t packets_sent = 0;     // data packets sent (duplicates counted once)
  std::uint64_t packets_dropped = 0;
  std::uint64_t samples_sent = 0;
  std::uint64_t samples_dropped = 0;  // exactly what a receiver should count lost
  std::uint64_t duplicates = 0;
  std::uint64_t reordered = 0;
  std::uint64_t malformed = 0;
};

struct UdpGenReport {
  std::string dest;
  std::vector<UdpGenStreamReport> streams;
  std::uint64_t datagrams = 0;        // every datagram handed to the kernel, faults included
  std::uint64_t bytes = 0;
  std::uint64_t send_errors = 0;      // datagrams the kernel refused (ENOBUFS, ECONNREFUSED ...)
  std::uint64_t packets_dropped = 0, samples_dropped = 0, duplicates = 0, reordered = 0, malformed = 0;
  std::uint64_t samples_sent = 0;
  double elapsed_s = 0;
  double packets_per_s = 0;           // datagrams per second achieved
  std::int64_t max_lateness_ns = 0;
  bool stopped = false;
};

/// Sample i of stream id: a ramp that wraps inside every dtype's range, so receivers can check
/// placement sample by sample. Thread: any.
[[nodiscard]] std::int64_t udpgen_sample(std::uint32_t stream_id, std::uint64_t index) noexcept;

/// With the pulses signal: samples [0, count) of stream `stream_id` exactly as udpgen sends them
/// (the dtype's codes in host order), made by the same generator; the receiver's reference.
/// Thread: any.
[[nodiscard]] core::Result<std::vector<std::byte>> udpgen_pulses(const UdpGenOptions& options, std::uint32_t stream_id,
                                                                 std::uint64_t count);

/// Checks the options; errors name the input. Thread: any.
[[nodiscard]] core::Result<void> validate(const UdpGenOptions& options);

/// Sends until done or `stop`. Returns what was sent and every fault injected, or a cold-path
/// failure (bad destination, socket). Thread: any one; `stop` from anywhere.
[[nodiscard]] core::Result<UdpGenReport> run_udpgen(const UdpGenOptions& options, const std::atomic<bool>& stop);

[[nodiscard]] core::Result<VitaTime> parse_vita_time(std::string_view text);
[[nodiscard]] core::Result<UdpGenSignal> parse_udpgen_signal(std::string_view text);

}  // namespace weir::acq

#pragma once
// The UDP driver's tunables, one line of comment each. No magic numbers elsewhere in acquisition/udp.
#include <cstdint>

namespace weir::acq {

inline constexpr std::uint32_t kUdpMaxDatagramBytes = 65536;         // receive buffer per datagram: the largest UDP payload fits
inline constexpr std::uint32_t kUdpDefaultBatch = 32;                // datagrams per recvmmsg / sendmmsg call unless asked
inline constexpr std::uint32_t kUdpMaxBatch = 1024;                  // refuse larger batches
inline constexpr std::uint32_t kUdpDefaultReorderBlocks = 2;         // a block waits for stragglers until data this many blocks past it arrives
inline constexpr std::uint32_t kUdpMaxReorderBlocks = 1024;          // refuse larger reorder windows
inline constexpr std::uint32_t kUdpMaxFragments = 32;                // disjoint received ranges tracked per open block
inline constexpr std::uint64_t kUdpResyncBlocks = 4096;              // a packet this many blocks behind restarts the stream (a board reset)
inline constexpr std::uint64_t kUdpHistoryBlocks = kUdpResyncBlocks; // closed blocks remembered, to tell a late duplicate from a late packet
inline constexpr std::uint32_t kUdpDefaultHorizonBlocks = 256;       // a timestamp jump past this many blocks must agree with the packet count
inline constexpr std::uint32_t kUdpMaxHorizonBlocks = 1U << 24;      // refuse larger horizons
inline constexpr std::uint32_t kUdpBadRunResync = 4;                 // this many bad timestamps in a row that agree: the source restarted
inline constexpr std::uint64_t kUdpMaxJumpSamples = 1ULL << 48;      // a packet this many samples ahead restarts it too (78 h at 1 GS/s)
inline constexpr std::int64_t kUdpDefaultRcvbufBytes = 64LL << 20;   // SO_RCVBUF asked for unless told
inline constexpr std::int64_t kUdpReceiveTimeoutNs = 100'000'000;    // a receive waits this long before looking at the stop flag
inline constexpr std::int64_t kUdpCounterPeriodNs = 250'000'000;     // arena counter keys are refreshed this often
inline constexpr std::int64_t kGpsEpochUnixS = 315'964'800;          // 1980-01-06T00:00:00Z, the GPS epoch, in Unix seconds
inline constexpr std::int64_t kGpsMinusUtcS = 18;                    // GPS - UTC leap seconds (since 2017-01-01)
inline constexpr double kUdpGenNoiseLsb = 4;                         // udpgen pulses: baseline noise sigma in LSB unless told
inline constexpr double kUdpGenCountRateHz = 20'000;                 // udpgen pulses: counts a second unless told
inline constexpr double kUdpGenFullScaleV = 10;                      // udpgen pulses: +-this many volts span the dtype's codes

}  // namespace weir::acq

// libFuzzer target: both packet decoders on arbitrary datagrams, with the invariants every accepted
// view must hold (payload inside the datagram, sizes consistent), and a stream assembler fed every
// accepted packet of a sequence, so placement, reordering and gaps see hostile indices too.
//
// Input: byte 0 picks the assembler's format (bit 7: raw, else VITA 49) and the VITA 49 dtype (low
// bits); then datagrams, each a little-endian u16 length and that many bytes.
#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <span>

#include "weir/udp/raw_packet.hpp"
#include "weir/udp/stream_assembler.hpp"
#include "weir/udp/vita49.hpp"

namespace {

using namespace weir::acq;
using weir::core::Dtype;

constexpr std::uint32_t kDtypes = 11;      // 1..10 name a dtype, 11 names none
constexpr std::uint32_t kBlock = 16;
constexpr std::uint32_t kMaxPacketSamples = 4096;

class CountingSink final : public BlockSink {
 public:
  std::uint64_t sum = 0;
  std::uint64_t samples = 0;
  bool publish(std::span<const std::byte> bytes, std::uint32_t count, std::uint64_t, std::uint64_t,
               std::uint32_t) noexcept override {
    if (count > kBlock) __builtin_trap();
    samples += count;
    for (std::byte b : bytes) sum += static_cast<std::uint64_t>(b);  // every byte is read: ASan checks it
    return true;
  }
  void skip(std::uint64_t blocks, weir::core::GapReason reason) noexcept override {
    if (reason != weir::core::GapReason::source_loss && reason != weir::core::GapReason::kernel_drop &&
        reason != weir::core::GapReason::malformed)
      __builtin_trap();
    gap_blocks += blocks;
  }
  std::uint64_t gap_blocks = 0;
};

void check(const PacketView& v, std::span<const std::byte> datagram) {
  const std::byte* begin = datagram.data();
  const std::byte* end = begin + datagram.size();
  if (v.payload < begin || v.payload + v.payload_bytes > end) __builtin_trap();
  if (v.samples == 0 || std::uint64_t{v.samples} * sample_bytes(v.dtype) != v.payload_bytes) __builtin_trap();
  if (v.datagram_bytes != datagram.size()) __builtin_trap();
  volatile std::uint64_t sum = 0;
  for (std::uint32_t i = 0; i < v.payload_bytes; ++i) sum = sum + static_cast<std::uint64_t>(v.payload[i]);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool raw = (data[0] & 0x80U) != 0;
  const auto vita_dtype = static_cast<Dtype>(1 + (data[0] & 0x7FU) % kDtypes);
  const Dtype stream_dtype = raw ? Dtype::i16 : (sample_bytes(vita_dtype) != 0 ? vita_dtype : Dtype::i16);

  CountingSink sink;
  StreamConfig config;
  config.dtype = stream_dtype;
  config.samples_per_block = kBlock;
  config.rate_hz = 1000;
  config.reorder_blocks = 2;
  config.max_packet_samples = kMaxPacketSamples;
  auto assembler = StreamAssembler::create(config, sink);
  if (!assembler) __builtin_trap();

  std::size_t at = 1;
  while (at + 2 <= size) {
    const std::size_t length = std::min<std::size_t>(data[at] | std::size_t{data[at + 1]} << 8, size - at - 2);
    const std::span<const std::byte> datagram(reinterpret_cast<const std::byte*>(data + at + 2), length);
    at += 2 + length;
    PacketView v;
    if (decode_raw(datagram, v) == PacketStatus::ok) {
      check(v, datagram);
      if (raw) (void)assembler->accept(v, 1, 1);
    }
    if (decode_vita49(datagram, vita_dtype, v) == PacketStatus::ok) {
      check(v, datagram);
      if (!raw && v.dtype == stream_dtype) (void)assembler->accept(v, 1, 1);
    }
  }
  assembler->finish();
  // Accounting: after finish() every sample placed is in a published block or was discarded with a gap.
  const StreamCounters& c = assembler->counters();
  if (sink.samples + c.discarded_samples != c.samples) __builtin_trap();
  // The packet ledger: every packet of the stream is recorded, a duplicate, late or refused; every
  // missing one is counted under one reason (late ones taken back); every gap block reached the sink.
  if (c.packets != c.recorded + c.duplicates + c.late + c.bad()) __builtin_trap();
  if (c.source_loss + c.kernel_drop + c.malformed_missing > c.missing_packets) __builtin_trap();
  if (sink.gap_blocks != c.gap_blocks) __builtin_trap();
  return 0;
}

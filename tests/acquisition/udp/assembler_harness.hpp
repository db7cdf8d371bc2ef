#pragma once
// What the stream assembler tests share: a sink that records what a channel would get (blocks with
// their samples and stamps, gaps with their reasons), packets built by the project's encoders, and
// a ramp every placed sample can be checked against.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include "weir/udp/raw_packet.hpp"
#include "weir/udp/stream_assembler.hpp"
#include "weir/udp/vita49.hpp"

namespace weir::test::udp {

using namespace weir::acq;
using weir::core::Dtype;

struct Event {
  bool gap = false;
  std::uint64_t blocks = 0;                 // gap: how many
  weir::core::GapReason reason = weir::core::GapReason::lapped;  // gap: why
  std::vector<std::int16_t> samples;        // block: its samples
  std::uint64_t realtime_ns = 0, monotonic_ns = 0;
  std::uint32_t flags = 0;
};

class RecordingSink : public BlockSink {
 public:
  std::vector<Event> events;
  bool refuse = false;
  bool publish(std::span<const std::byte> samples, std::uint32_t count, std::uint64_t realtime_ns,
               std::uint64_t monotonic_ns, std::uint32_t flags) noexcept override {
    if (refuse) return false;
    Event e;
    e.samples.resize(count);
    std::memcpy(e.samples.data(), samples.data(), count * sizeof(std::int16_t));
    e.realtime_ns = realtime_ns;
    e.monotonic_ns = monotonic_ns;
    e.flags = flags;
    events.push_back(std::move(e));
    return true;
  }
  void skip(std::uint64_t blocks, weir::core::GapReason reason) noexcept override {
    Event e;
    e.gap = true;
    e.blocks = blocks;
    e.reason = reason;
    events.push_back(std::move(e));
  }
  // Blocks in channel order, a gap block as an empty vector (one per gap block).
  [[nodiscard]] std::vector<std::vector<std::int16_t>> blocks() const {
    std::vector<std::vector<std::int16_t>> out;
    for (const Event& e : events) {
      if (e.gap)
        out.insert(out.end(), e.blocks, {});
      else
        out.push_back(e.samples);
    }
    return out;
  }
  // Gap blocks published for `reason`.
  [[nodiscard]] std::uint64_t gaps(weir::core::GapReason reason) const {
    std::uint64_t n = 0;
    for (const Event& e : events)
      if (e.gap && e.reason == reason) n += e.blocks;
    return n;
  }
};

// The value the tests give stream sample i.
inline std::int16_t value(std::uint64_t i) { return static_cast<std::int16_t>(i * 3 + 1); }

inline std::vector<std::int16_t> ramp(std::uint64_t first, std::uint32_t count) {
  std::vector<std::int16_t> out(count);
  for (std::uint32_t i = 0; i < count; ++i) out[i] = value(first + i);
  return out;
}

// A raw packet of `count` samples starting at stream index first, decoded into a view of `buf`.
inline PacketView raw(std::vector<std::byte>& buf, std::uint64_t first, std::uint32_t count, std::uint64_t time_ns = 0) {
  const auto samples = ramp(first, count);
  buf.resize(kRawHeaderBytes + count * 2);
  RawFields f;
  f.stream_id = 1;
  f.sequence = first / count;  // packets of `count` samples, numbered from index 0
  f.first_sample = first;
  f.timestamp_ns = time_ns;
  REQUIRE(encode_raw(f, Dtype::i16, std::as_bytes(std::span(samples)), buf) == buf.size());
  PacketView v;
  REQUIRE(decode_raw(buf, v) == PacketStatus::ok);
  return v;
}

inline PacketView vita(std::vector<std::byte>& buf, const Vita49Fields& f, std::uint64_t first, std::uint32_t count) {
  const auto samples = ramp(first, count);
  buf.resize(64 + count * 2);
  const std::size_t n = encode_vita49(f, Dtype::i16, std::as_bytes(std::span(samples)), buf);
  REQUIRE(n > 0);
  buf.resize(n);
  PacketView v;
  REQUIRE(decode_vita49(buf, Dtype::i16, v) == PacketStatus::ok);
  return v;
}

inline StreamConfig config(std::uint32_t block, std::uint32_t reorder = 2) {
  StreamConfig c;
  c.dtype = Dtype::i16;
  c.samples_per_block = block;
  c.rate_hz = 1000;
  c.reorder_blocks = reorder;
  c.max_packet_samples = 1024;
  return c;
}

// Feeds packets of `count` samples with the given starting indices, in that order.
inline void feed(StreamAssembler& a, const std::vector<std::uint64_t>& firsts, std::uint32_t count) {
  std::vector<std::byte> buf;
  for (std::uint64_t first : firsts) (void)a.accept(raw(buf, first, count), 1, 1);
}

inline std::vector<std::uint64_t> packet_starts(std::uint64_t packets, std::uint32_t count, std::uint64_t from = 0) {
  std::vector<std::uint64_t> out(packets);
  for (std::uint64_t i = 0; i < packets; ++i) out[i] = from + i * count;
  return out;
}


}  // namespace weir::test::udp

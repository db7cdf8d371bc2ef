// Where a packet goes: its stream index from timestamps or, without them, from its packet count;
// whether its count agrees with its timestamp; its time. (The blocks it fills: stream_assembler.cpp.)
#include <algorithm>
#include <cmath>
#include <cstring>

#include "time_units.hpp"
#include "weir/udp/stream_assembler.hpp"

namespace weir::acq {

namespace {

constexpr std::uint64_t kPsPerNs = 1000;
constexpr std::uint64_t kNsPerSU = 1'000'000'000ULL;
constexpr double kMaxExactIndex = 9e15;  // below 2^53: a double index still counts single samples
constexpr std::uint64_t kVitaCountWrap = 16;
constexpr std::uint64_t kVitaCountMask = kVitaCountWrap - 1;
constexpr std::uint32_t kMaxCountBack = 7;  // without TSF, at most this many count steps read as a late packet

// A payload's first and last 4 bytes: a duplicate of the newest packet repeats them.
std::uint64_t payload_ends(const PacketView& p) noexcept {
  std::uint32_t head = 0, tail = 0;
  const std::size_t n = std::min<std::size_t>(sizeof head, p.payload_bytes);
  std::memcpy(&head, p.payload, n);
  std::memcpy(&tail, p.payload + p.payload_bytes - n, n);
  return std::uint64_t{head} << 32 | tail;
}

}  // namespace

// VITA 49 with a fractional timestamp: the index the timestamps give, counted from the reference
// (the timestamps of the packet that started the stream). false: no usable index.
bool StreamAssembler::timestamp_index(const PacketView& p, std::uint64_t& index) noexcept {
  const std::uint64_t seconds = std::uint64_t{p.integer_ts} - std::uint64_t{first_integer_ts_};  // modulo 2^64
  switch (p.tsf) {
    case Tsf::sample_count:
      if (p.tsi != Tsi::none) {  // the count restarts every integer second
        index = seconds * rate_per_s_ + p.fractional_ts;
        return true;
      }
      [[fallthrough]];
    case Tsf::free_running: index = p.fractional_ts; return true;
    case Tsf::real_time_ps: {
      const double s = static_cast<double>(static_cast<std::int64_t>(seconds));
      const double ps = static_cast<double>(p.fractional_ts) - static_cast<double>(first_fractional_ts_);
      const double at = s * config_.rate_hz + ps / kPsPerS * config_.rate_hz;
      if (!(std::fabs(at) < kMaxExactIndex)) return false;
      index = static_cast<std::uint64_t>(std::llround(at));
      return true;
    }
    case Tsf::none: return false;
  }
  return false;
}

// VITA 49 without a fractional timestamp: the index the 4-bit count gives, from the newest packet.
std::uint64_t StreamAssembler::count_index(const PacketView& p) noexcept {
  if (!front_.valid) return 0;
  const std::uint64_t step = front_.samples;
  std::uint64_t d = (p.sequence - front_.count) & kVitaCountMask;
  if (d == 0) d = kVitaCountWrap;  // not the newest packet again (position_of checked): 16 on
  const std::uint64_t window = std::min<std::uint64_t>(
      kMaxCountBack, (std::uint64_t{config_.reorder_blocks} * config_.samples_per_block + step - 1) / step);
  std::uint64_t index = front_.index + d * step;
  if (d != kVitaCountWrap && d + window >= kVitaCountWrap) {  // a packet that many places late, if that is a hole
    const std::uint64_t back = front_.index - (kVitaCountWrap - d) * step;
    const std::uint64_t back_rel = back - start_index_;  // before the stream's start: not a hole
    if (started_ && static_cast<std::int64_t>(back_rel) >= 0 && !received(back_rel, p.samples)) index = back;
  }
  if (p.tsi != Tsi::none && p.tsi == tsi_) {
    // The seconds bound how early it can be: a packet two seconds on is at least one second of samples on.
    const auto seconds = static_cast<std::int64_t>(std::uint64_t{p.integer_ts} - front_.integer_ts);
    if (seconds >= 2 && seconds < (std::int64_t{1} << 31)) {
      const std::uint64_t at_least = front_.index + static_cast<std::uint64_t>(seconds - 1) * rate_per_s_;
      const auto early = static_cast<std::int64_t>(at_least - index);
      if (early > 0) {
        const std::uint64_t wrap = kVitaCountWrap * step;
        index += (static_cast<std::uint64_t>(early) + wrap - 1) / wrap * wrap;
      }
    }
  }
  return index;
}

StreamAssembler::Position StreamAssembler::position_of(const PacketView& p, std::uint64_t& index) noexcept {
  if (p.format == PacketFormat::raw) {
    index = p.first_sample;
    return Position::ok;
  }
  if (reference_ && (p.tsi != tsi_ || p.tsf != tsf_)) return Position::restart;  // the source changed its timestamps
  if (!reference_) {
    reference_ = true;
    first_integer_ts_ = p.integer_ts;
    first_fractional_ts_ = p.fractional_ts;
    tsi_ = p.tsi;
    tsf_ = p.tsf;
  }
  if (p.tsf != Tsf::none) return timestamp_index(p, index) ? Position::ok : Position::restart;
  if (front_.valid && ((p.sequence - front_.count) & kVitaCountMask) == 0 && p.samples == front_.samples &&
      payload_ends(p) == front_.ends)
    return Position::duplicate;
  index = count_index(p);
  return Position::ok;
}

// Whether p's packet count is the one after `count` (VITA 49: modulo 16).
bool StreamAssembler::count_follows(const PacketView& p, std::uint64_t count) noexcept {
  return p.format == PacketFormat::raw ? p.sequence == count + 1 : ((p.sequence - count) & kVitaCountMask) == 1;
}

// A packet more than the horizon from the newest one must agree with its packet count.
bool StreamAssembler::plausible(const PacketView& p, std::uint64_t index) const noexcept {
  if (!front_.valid || (p.format == PacketFormat::vita49 && p.tsf == Tsf::none)) return true;
  const std::uint64_t front_end = front_.index + front_.samples;
  const std::uint64_t horizon = std::uint64_t{config_.horizon_blocks} * config_.samples_per_block;
  const auto distance = static_cast<std::int64_t>(index - front_end);
  if (distance >= -static_cast<std::int64_t>(horizon) && distance <= static_cast<std::int64_t>(horizon)) return true;
  const std::uint64_t step = step_ != 0 ? step_ : front_.samples;
  const std::uint64_t delta = index - front_.index;  // modulo 2^64: a packet behind wraps
  if (p.format == PacketFormat::raw) return delta == (p.sequence - front_.count) * step;
  const auto signed_delta = static_cast<std::int64_t>(delta);
  if (signed_delta % static_cast<std::int64_t>(step) != 0) return false;
  const auto packets = static_cast<std::uint64_t>(signed_delta / static_cast<std::int64_t>(step));
  return (packets & kVitaCountMask) == ((p.sequence - front_.count) & kVitaCountMask);
}

// A bad timestamp: counted, never placed; four in a row that agree with each other restart the stream.
AcceptStatus StreamAssembler::refuse_timestamp(const PacketView& p, std::uint64_t index) noexcept {
  const bool raw = p.format == PacketFormat::raw;
  const bool agrees = bad_run_.length > 0 && index == bad_run_.next_index &&
                      (raw ? p.sequence == bad_run_.next_count
                           : (p.sequence & kVitaCountMask) == (bad_run_.next_count & kVitaCountMask));
  bad_run_.length = agrees ? bad_run_.length + 1 : 1;
  bad_run_.next_index = index + p.samples;
  bad_run_.next_count = p.sequence + 1;
  if (bad_run_.length < kUdpBadRunResync) {
    ++counters_.bad_timestamp;
    if (!agrees) bad_run_.unplaced = 0;
    if (!refuse_packet(p)) ++bad_run_.unplaced;
    return AcceptStatus::bad_timestamp;
  }
  // The source restarted: the packets before this one were of its new stream, not bad slots of the old.
  bad_pending_ -= std::min<std::uint64_t>(bad_pending_, bad_run_.unplaced);
  bad_slots_ = 0;
  bad_run_ = BadRun{};
  restart();
  return AcceptStatus::placed;  // the caller places it afresh
}

// A refused packet of this stream: where its count says it belongs (its hole is the one it
// explains), or, with no newest packet to count from or no room, waiting for any hole. true: placed.
bool StreamAssembler::refuse_packet(const PacketView& p) noexcept {
  if (started_ && front_.valid && bad_slots_ < kBadSlots) {
    const std::uint64_t step = packet_samples();
    std::uint64_t packets = p.sequence - front_.count;  // raw: exact, modulo 2^64
    if (p.format == PacketFormat::vita49) {
      packets &= kVitaCountMask;
      if (packets == 0) packets = kVitaCountWrap;
    }
    const std::uint64_t rel = front_.index + packets * step - start_index_;
    const std::uint64_t n = config_.samples_per_block;
    if (rel >= head_ * n && rel - head_ * n < kUdpHistoryBlocks * n) {
      bad_slot_[bad_slots_++] = rel;
      return true;
    }
  }
  ++bad_pending_;
  return false;
}

void StreamAssembler::advance_front(const PacketView& p, std::uint64_t index) noexcept {
  if (front_.valid && static_cast<std::int64_t>(index - front_.index) < 0) return;  // a late one: not the newest
  front_.valid = true;
  front_.count = p.sequence;
  front_.index = index;
  front_.samples = p.samples;
  front_.integer_ts = p.integer_ts;
  front_.ends = p.format == PacketFormat::vita49 && p.tsf == Tsf::none ? payload_ends(p) : 0;
}

// The first packet of a VITA 49 stream with TSF waits for the second, whose timestamp gives the step.
void StreamAssembler::hold(const PacketView& p, std::uint64_t index, std::uint64_t rx_realtime_ns,
                           std::uint64_t rx_monotonic_ns) noexcept {
  const std::size_t bytes = std::min<std::size_t>(p.payload_bytes, held_bytes_.size());
  std::memcpy(held_bytes_.data(), p.payload, bytes);
  held_ = p;
  held_.payload = held_bytes_.data();
  held_index_ = index;
  held_rx_realtime_ns_ = rx_realtime_ns;
  held_rx_monotonic_ns_ = rx_monotonic_ns;
  holding_ = true;
}

std::uint64_t StreamAssembler::packet_time_ns(const PacketView& p) const noexcept {
  if (p.format == PacketFormat::raw) return p.timestamp_ns;
  std::int64_t seconds = 0;
  switch (p.tsi) {
    case Tsi::utc: seconds = p.integer_ts; break;
    case Tsi::gps: seconds = std::int64_t{p.integer_ts} + kGpsEpochUnixS - kGpsMinusUtcS; break;
    case Tsi::none:
    case Tsi::other: return 0;
  }
  std::uint64_t ns = 0;
  switch (p.tsf) {
    case Tsf::real_time_ps: ns = p.fractional_ts / kPsPerNs; break;
    case Tsf::sample_count:
      if (p.fractional_ts >= rate_per_s_) return 0;  // not a count within a second: no usable time
      ns = static_cast<std::uint64_t>(std::llround(static_cast<double>(p.fractional_ts) * kNsPerS / config_.rate_hz));
      break;
    case Tsf::none:
    case Tsf::free_running: return 0;
  }
  if (seconds < 0) return 0;
  return static_cast<std::uint64_t>(seconds) * kNsPerSU + ns;
}

}  // namespace weir::acq

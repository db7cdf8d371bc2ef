// Packets to blocks: a staged reorder window, gaps for what never came, a history of closed blocks.
// (Where a packet goes: stream_position.cpp; who lost a missing one: stream_ledger.cpp.)
#include "weir/udp/stream_assembler.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "time_units.hpp"
#include "weir/core/limits.hpp"
#include "weir/udp/detail/bytes.hpp"

namespace weir::acq {

namespace {

constexpr double kMaxRateHz = 1e15;      // a femtosecond sample period: far past any digitizer
constexpr std::uint32_t kMaskBits = 64;  // granules of a block in a history mask

tl::unexpected<core::Error> refuse(const std::string& why) {
  return core::fail(core::Errc::invalid_argument, "udp stream: " + why);
}

const char* tsi_name(Tsi tsi) noexcept {
  switch (tsi) {
    case Tsi::none: return "none";
    case Tsi::utc: return "utc";
    case Tsi::gps: return "gps";
    case Tsi::other: return "other";
  }
  return "?";
}

const char* tsf_name(Tsf tsf) noexcept {
  switch (tsf) {
    case Tsf::none: return "none";
    case Tsf::sample_count: return "sample_count";
    case Tsf::real_time_ps: return "real_time_ps";
    case Tsf::free_running: return "free_running";
  }
  return "?";
}

}  // namespace

core::Result<StreamAssembler> StreamAssembler::create(const StreamConfig& config, BlockSink& sink, PortDrops* port) {
  if (sample_bytes(config.dtype) == 0) return refuse("unknown dtype");
  if (config.samples_per_block == 0 || config.samples_per_block > core::kMaxSamplesPerBlock)
    return refuse(fmt::format("block must be 1 to {} samples, not {}", core::kMaxSamplesPerBlock,
                              config.samples_per_block));
  if (!std::isfinite(config.rate_hz) || config.rate_hz <= 0 || config.rate_hz > kMaxRateHz)
    return refuse(fmt::format("rate must be a positive number of Hz up to {}, not {}", kMaxRateHz, config.rate_hz));
  if (config.reorder_blocks > kUdpMaxReorderBlocks)
    return refuse(fmt::format("reorder window must be 0 to {} blocks, not {}", kUdpMaxReorderBlocks,
                              config.reorder_blocks));
  if (config.horizon_blocks <= config.reorder_blocks || config.horizon_blocks > kUdpMaxHorizonBlocks)
    return refuse(fmt::format("timestamp horizon must be more blocks than the reorder window ({}) and at most {}, "
                              "not {}", config.reorder_blocks, kUdpMaxHorizonBlocks, config.horizon_blocks));
  if (config.max_packet_samples == 0) return refuse("the largest packet must hold at least one sample");
  // The window, one block more (a packet up to `reorder` blocks late), every block one packet can
  // touch, and the block being closed.
  const std::uint64_t span = (std::uint64_t{config.max_packet_samples} + config.samples_per_block - 1) /
                             config.samples_per_block + 1;
  const std::uint64_t slots = config.reorder_blocks + span + 2;
  if (slots * config.samples_per_block * sample_bytes(config.dtype) > (std::uint64_t{1} << 32))
    return refuse(fmt::format("a staging ring of {} blocks of {} samples is too large; use smaller blocks or a "
                              "smaller reorder window", slots, config.samples_per_block));
  return StreamAssembler(config, sink, port, static_cast<std::uint32_t>(slots));
}

StreamAssembler::StreamAssembler(const StreamConfig& config, BlockSink& sink, PortDrops* port, std::uint32_t slots)
    : config_(config),
      sink_(&sink),
      port_(port),
      slots_(slots),
      sample_bytes_(sample_bytes(config.dtype)),
      block_bytes_(std::size_t{config.samples_per_block} * sample_bytes(config.dtype)),
      granule_((config.samples_per_block + kMaskBits - 1) / kMaskBits),
      full_mask_(0),
      staging_(block_bytes_ * slots),
      open_(slots),
      ranges_(std::size_t{slots} * kUdpMaxFragments),
      history_tag_(kUdpHistoryBlocks, 0),
      history_mask_(kUdpHistoryBlocks, 0),
      rate_per_s_(static_cast<std::uint64_t>(std::llround(config.rate_hz))),
      held_bytes_(std::size_t{config.max_packet_samples} * sample_bytes(config.dtype)) {
  const std::uint32_t granules = (config.samples_per_block + granule_ - 1) / granule_;
  full_mask_ = granules >= kMaskBits ? ~std::uint64_t{0} : (std::uint64_t{1} << granules) - 1;
}

void StreamAssembler::reset_slot(std::uint64_t block) noexcept {
  staged_ -= open(block).filled;
  open(block) = Open{};
}

void StreamAssembler::remember(std::uint64_t block, std::uint64_t mask) noexcept {
  history_tag_[block % kUdpHistoryBlocks] = block + 1;
  history_mask_[block % kUdpHistoryBlocks] = mask;
}

// The granules of an open block its ranges cover whole.
std::uint64_t StreamAssembler::received_mask(std::uint64_t block) noexcept {
  const Open& o = open(block);
  const Range* r = ranges(block);
  const std::uint32_t n = config_.samples_per_block;
  std::uint64_t mask = 0;
  for (std::uint32_t i = 0; i < o.fragments; ++i)
    for (std::uint32_t g = (r[i].lo + granule_ - 1) / granule_; g * granule_ < r[i].hi; ++g)
      if (std::min(n, (g + 1) * granule_) <= r[i].hi) mask |= std::uint64_t{1} << g;
  return mask;
}

void StreamAssembler::close_oldest() noexcept {
  Open& o = open(head_);
  const std::uint32_t n = config_.samples_per_block;
  if (o.filled == n) {
    remember(head_, full_mask_);
    flush_gap();
    if (sink_->publish(std::span(data(head_), block_bytes_), n, o.realtime_ns, o.monotonic_ns, o.flags))
      ++counters_.blocks_published;
    else
      ++counters_.blocks_dropped;
  } else {
    remember(head_, received_mask(head_));
    counters_.lost_samples += n - o.filled;
    counters_.discarded_samples += o.filled;
    gap_blocks(1, n - o.filled, head_ * n, head_ * n + n);
  }
  reset_slot(head_);
  ++head_;
}

void StreamAssembler::advance_to(std::uint64_t block) noexcept {
  const std::uint64_t n = config_.samples_per_block;
  while (head_ < block) {
    std::uint64_t empty = 0;  // blocks from head_ on that received nothing: one gap for all of them
    while (head_ + empty < block && (open(head_ + empty).filled == 0 || (head_ + empty) * n >= max_end_)) {
      if ((head_ + empty) * n >= max_end_) {  // nothing beyond max_end_ was received: all empty
        empty = block - head_;
        break;
      }
      ++empty;
    }
    if (empty == 0) {
      close_oldest();
      continue;
    }
    for (std::uint64_t b = head_; b < head_ + std::min<std::uint64_t>(empty, slots_); ++b) reset_slot(b);
    const std::uint64_t remembered = std::min<std::uint64_t>(empty, kUdpHistoryBlocks);
    for (std::uint64_t b = head_ + empty - remembered; b < head_ + empty; ++b) remember(b, 0);
    counters_.lost_samples += empty * n;
    gap_blocks(empty, empty * n, head_ * n, (head_ + empty) * n);
    head_ += empty;
  }
}

void StreamAssembler::place_held() noexcept {
  holding_ = false;
  (void)place(held_, held_index_, held_rx_realtime_ns_, held_rx_monotonic_ns_);
}

void StreamAssembler::finish() noexcept {
  if (holding_) place_held();
  if (!started_) {
    flush_gap();
    return;
  }
  const std::uint64_t n = config_.samples_per_block;
  while (head_ * n < max_end_) {
    Open& o = open(head_);
    const auto expected = static_cast<std::uint32_t>(std::min(n, max_end_ - head_ * n));
    if (o.filled == expected) {
      remember(head_, full_mask_);
      flush_gap();
      if (sink_->publish(std::span(data(head_), std::size_t{expected} * sample_bytes_), expected, o.realtime_ns,
                         o.monotonic_ns, o.flags))
        ++counters_.blocks_published;
      else
        ++counters_.blocks_dropped;
    } else {
      remember(head_, received_mask(head_));
      counters_.lost_samples += expected - o.filled;
      counters_.discarded_samples += o.filled;
      gap_blocks(1, expected - o.filled, head_ * n, head_ * n + expected);
    }
    reset_slot(head_);
    ++head_;
  }
  flush_gap();
}

void StreamAssembler::restart() noexcept {
  finish();
  if (started_ || front_.valid) ++counters_.resyncs;
  started_ = false;
  reference_ = false;
  front_ = Front{};
  bad_run_ = BadRun{};
  std::fill(history_tag_.begin(), history_tag_.end(), 0);  // block numbers start again at 0
}

AcceptStatus StreamAssembler::accept(const PacketView& p, std::uint64_t rx_realtime_ns,
                                     std::uint64_t rx_monotonic_ns) noexcept {
  ++counters_.packets;
  counters_.bytes += p.datagram_bytes;
  if (p.format == PacketFormat::raw && p.dtype != config_.dtype) {
    ++counters_.dtype_mismatch;
    (void)refuse_packet(p);
    return AcceptStatus::dtype_mismatch;
  }
  if (p.samples > config_.max_packet_samples || p.samples == 0) {
    ++counters_.oversized;
    (void)refuse_packet(p);
    return AcceptStatus::oversized;
  }
  std::uint64_t index = 0;
  Position at = position_of(p, index);
  if (at == Position::restart) {  // the source changed its timestamps: close what is open, start afresh
    if (holding_) place_held();
    restart();
    at = position_of(p, index);
  }
  if (at == Position::restart) {  // no index even on a fresh start (a hopeless timestamp)
    ++counters_.bad_timestamp;
    (void)refuse_packet(p);
    return AcceptStatus::bad_timestamp;
  }
  if (at == Position::duplicate) {
    ++counters_.duplicates;
    return AcceptStatus::duplicate;
  }
  if (!plausible(p, index)) {
    if (const AcceptStatus s = refuse_timestamp(p, index); s != AcceptStatus::placed) return s;
    if (position_of(p, index) != Position::ok) {  // no index even from a fresh reference
      ++counters_.bad_timestamp;
      (void)refuse_packet(p);
      return AcceptStatus::bad_timestamp;
    }
  } else {
    bad_run_.length = 0;
  }
  if (p.format == PacketFormat::vita49 && p.tsf != Tsf::none) {
    if (holding_) {
      if (count_follows(p, held_.sequence) && step_ == 0) {
        const std::uint64_t step = index - held_index_;
        if (step > 0 && step <= config_.max_packet_samples) step_ = static_cast<std::uint32_t>(step);
      }
      if (step_ != 0 && held_.samples != step_) {
        holding_ = false;
        ++counters_.width_mismatch;
        ++bad_pending_;  // the stream's first packet: no newest one to count its place from
      } else {
        place_held();
      }
    }
    if (step_ != 0 && p.samples != step_) {
      ++counters_.width_mismatch;
      (void)refuse_packet(p);
      return AcceptStatus::width_mismatch;
    }
    if (step_ == 0 && !front_.valid && !holding_) {
      hold(p, index, rx_realtime_ns, rx_monotonic_ns);
      return AcceptStatus::held;
    }
  }
  return place(p, index, rx_realtime_ns, rx_monotonic_ns);
}

void StreamAssembler::copy_in(std::byte* dst, const std::byte* src, std::size_t bytes, bool big_endian) const noexcept {
  if (big_endian != (std::endian::native == std::endian::big))
    detail::copy_swapped(dst, src, bytes, swap_unit_bytes(config_.dtype));
  else
    std::memcpy(dst, src, bytes);
}

// A packet that is exactly the next block, in order: written into the channel's slot (the staging
// copy saved), stamped and published as close_oldest() would. false: the sink has no slots to give.
bool StreamAssembler::place_direct(const PacketView& p, std::uint64_t rx_realtime_ns,
                                   std::uint64_t rx_monotonic_ns) noexcept {
  flush_gap();  // the run before this block reaches the channel first
  std::span<std::byte> slot;
  const BlockSink::Claim claimed = sink_->claim(slot);
  if (claimed == BlockSink::Claim::unsupported) return false;
  const std::uint64_t packet_ns = packet_time_ns(p);
  clock_ = packet_ns != 0 ? ClockSource::packet : ClockSource::receive;
  if (claimed == BlockSink::Claim::ok) {
    copy_in(slot.data(), p.payload, std::min(block_bytes_, slot.size()), p.big_endian);
    sink_->commit(config_.samples_per_block, packet_ns != 0 ? packet_ns : rx_realtime_ns, rx_monotonic_ns,
                  packet_ns != 0 ? kBlockPacketTimeFlag : 0U);
    ++counters_.blocks_published;
  } else {
    ++counters_.blocks_dropped;
  }
  remember(head_, full_mask_);
  ++head_;
  max_end_ += p.samples;
  settle_budgets();
  counters_.samples += p.samples;
  ++counters_.recorded;
  advance_front(p, start_index_ + max_end_ - p.samples);
  return true;
}

// Whether every granule of [first_rel, first_rel + samples) had been received (closed blocks: the
// history; open ones: their ranges; blocks past the staged ones: no).
bool StreamAssembler::received(std::uint64_t first_rel, std::uint64_t samples) noexcept {
  const std::uint64_t n = config_.samples_per_block;
  const std::uint64_t end = first_rel + samples;
  for (std::uint64_t b = first_rel / n; b <= (end - 1) / n; ++b) {
    if (b >= head_ + slots_ || b + kUdpHistoryBlocks < head_) return false;
    const auto lo = static_cast<std::uint32_t>(std::max(first_rel, b * n) - b * n);
    const auto hi = static_cast<std::uint32_t>(std::min(end, (b + 1) * n) - b * n);
    const std::uint64_t mask = b < head_ ? (history_tag_[b % kUdpHistoryBlocks] == b + 1
                                                ? history_mask_[b % kUdpHistoryBlocks] : 0)
                                         : received_mask(b);
    for (std::uint32_t g = lo / granule_; g * granule_ < hi; ++g)
      if ((mask >> g & 1U) == 0) return false;
  }
  return true;
}

// A packet before the oldest open block: a duplicate when everything it holds had been received,
// else late.
AcceptStatus StreamAssembler::behind(const PacketView& p, std::uint64_t first_rel) noexcept {
  if (received(first_rel, p.samples)) {
    ++counters_.duplicates;
    return AcceptStatus::duplicate;
  }
  ++counters_.late;
  take_back_late();
  return AcceptStatus::late;
}

AcceptStatus StreamAssembler::place(const PacketView& p, std::uint64_t index, std::uint64_t rx_realtime_ns,
                                    std::uint64_t rx_monotonic_ns) noexcept {
  const std::uint64_t n = config_.samples_per_block;
  if (started_) {
    const std::uint64_t head_pos = head_ * n;
    const std::uint64_t rel = index - start_index_;                // modulo 2^64
    const auto ahead = static_cast<std::int64_t>(rel - head_pos);  // < 0: before the oldest open block
    if (ahead < 0) {
      const std::uint64_t back = 0 - static_cast<std::uint64_t>(ahead);
      if (back <= head_pos && back < kUdpHistoryBlocks * n) return behind(p, rel);
      if (back < kUdpHistoryBlocks * n) {  // before the stream's first sample: it started on a later packet
        ++counters_.late;
        return AcceptStatus::late;
      }
      restart();
    } else if (static_cast<std::uint64_t>(ahead) > kUdpMaxJumpSamples) {
      restart();
    }
  }
  if (!started_) {
    started_ = true;
    start_index_ = index;
    head_ = 0;
    max_end_ = 0;
    format_ = p.format;
    kernel_base_ = port().kernel;  // what the port lost before the stream (re)started is not in it
    refused_base_ = port().refused;
    marks_pushed_ = 0;
  }

  const std::uint64_t first = index - start_index_;
  const std::uint64_t end = first + p.samples;
  const std::uint64_t last_block = (end - 1) / n;
  const bool fresh = last_block >= head_ + slots_;  // past every staged block: nothing there to overlap
  // Check every block the packet touches before writing any: a duplicate or overflow changes nothing.
  for (std::uint64_t b = first / n; !fresh && b <= last_block; ++b) {
    const auto lo = static_cast<std::uint32_t>(std::max(first, b * n) - b * n);
    const auto hi = static_cast<std::uint32_t>(std::min(end, (b + 1) * n) - b * n);
    const Open& o = open(b);
    const Range* r = ranges(b);
    bool merges = false;
    for (std::uint32_t i = 0; i < o.fragments; ++i) {
      if (lo < r[i].hi && r[i].lo < hi) {
        ++counters_.duplicates;
        return AcceptStatus::duplicate;
      }
      if (r[i].hi == lo || r[i].lo == hi) merges = true;
    }
    if (!merges && o.fragments == kUdpMaxFragments) {
      ++counters_.overflow;
      (void)refuse_packet(p);
      return AcceptStatus::overflow;
    }
  }
  mark_port(first);
  // Past the staged blocks: close everything before the packet at once (one gap, not two), up to
  // where the window will stand once it is placed.
  if (fresh) advance_to(std::max(last_block - slots_ + 1, std::min(last_block - config_.reorder_blocks, first / n)));
  // The next block whole, in order, nothing staged: straight into the channel's slot.
  if (first == head_ * n && p.samples == n && max_end_ == first && place_direct(p, rx_realtime_ns, rx_monotonic_ns))
    return AcceptStatus::placed;

  const std::uint64_t packet_ns = packet_time_ns(p);
  for (std::uint64_t b = first / n; b <= last_block; ++b) {
    const std::uint64_t lo64 = std::max(first, b * n);
    const auto lo = static_cast<std::uint32_t>(lo64 - b * n);
    const auto hi = static_cast<std::uint32_t>(std::min(end, (b + 1) * n) - b * n);
    const std::byte* src = p.payload + (lo64 - first) * sample_bytes_;
    std::byte* dst = data(b) + std::size_t{lo} * sample_bytes_;
    copy_in(dst, src, std::size_t{hi - lo} * sample_bytes_, p.big_endian);

    Open& o = open(b);
    Range* r = ranges(b);
    std::uint32_t at = 0;  // insert [lo, hi) sorted, merging with the neighbours it touches
    while (at < o.fragments && r[at].hi < lo) ++at;
    if (at < o.fragments && r[at].hi == lo) {
      r[at].hi = hi;
      if (at + 1 < o.fragments && r[at + 1].lo == hi) {
        r[at].hi = r[at + 1].hi;
        std::move(r + at + 2, r + o.fragments, r + at + 1);
        --o.fragments;
      }
    } else if (at < o.fragments && r[at].lo == hi) {
      r[at].lo = lo;
    } else {
      std::move_backward(r + at, r + o.fragments, r + o.fragments + 1);
      r[at] = Range{lo, hi};
      ++o.fragments;
    }
    o.filled += hi - lo;
    staged_ += hi - lo;
    if (lo == 0) {  // this packet holds the block's first sample: it stamps the block
      const std::uint64_t offset = b * n - first;
      if (packet_ns != 0) {
        o.realtime_ns = packet_ns + static_cast<std::uint64_t>(
                                        std::llround(static_cast<double>(offset) * kNsPerS / config_.rate_hz));
        o.flags = kBlockPacketTimeFlag;
        clock_ = ClockSource::packet;
      } else {
        o.realtime_ns = rx_realtime_ns;
        o.flags = 0;
        clock_ = ClockSource::receive;
      }
      o.monotonic_ns = rx_monotonic_ns;
      o.stamped = true;
    }
  }
  if (first < max_end_) ++counters_.reordered;
  max_end_ = std::max(max_end_, end);
  counters_.samples += p.samples;
  ++counters_.recorded;
  advance_front(p, index);

  // Close the blocks the window has passed (data more than reorder_blocks past their end came), then
  // any complete ones at the head.
  const std::uint64_t newest = (max_end_ - 1) / n;  // the newest block holding data
  if (newest > config_.reorder_blocks) advance_to(newest - config_.reorder_blocks);
  while (open(head_).filled == n) close_oldest();
  settle_budgets();
  return AcceptStatus::placed;
}

std::string StreamAssembler::clock_text() const {
  switch (clock_) {
    case ClockSource::unknown: return "unknown: no block stamped yet";
    case ClockSource::receive: return "receive: CLOCK_REALTIME when the packet with the block's first sample arrived";
    case ClockSource::packet:
      if (format_ == PacketFormat::raw) return "packet: raw timestamp_ns of the block's first sample";
      return fmt::format("packet: VITA 49 TSI {}, TSF {}, of the block's first sample", tsi_name(tsi_),
                         tsf_name(tsf_));
  }
  return "unknown";
}

}  // namespace weir::acq

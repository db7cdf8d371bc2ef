// Packets to blocks: placement by stream index, a staged reorder window, gaps for what never came.
#include "weir/udp/stream_assembler.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "weir/core/limits.hpp"
#include "weir/udp/detail/bytes.hpp"

namespace weir::acq {

namespace {

constexpr double kNsPerS = 1e9;
constexpr double kPsPerS = 1e12;
constexpr std::uint64_t kPsPerNs = 1000;
constexpr std::uint64_t kNsPerSU = 1'000'000'000ULL;
constexpr double kMaxRateHz = 1e15;      // a femtosecond sample period: far past any digitizer
constexpr double kMaxExactIndex = 9e15;  // below 2^53: a double index still counts single samples

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

core::Result<StreamAssembler> StreamAssembler::create(const StreamConfig& config, BlockSink& sink) {
  if (sample_bytes(config.dtype) == 0) return refuse("unknown dtype");
  if (config.samples_per_block == 0 || config.samples_per_block > core::kMaxSamplesPerBlock)
    return refuse(fmt::format("block must be 1 to {} samples, not {}", core::kMaxSamplesPerBlock,
                              config.samples_per_block));
  if (!std::isfinite(config.rate_hz) || config.rate_hz <= 0 || config.rate_hz > kMaxRateHz)
    return refuse(fmt::format("rate must be a positive number of Hz up to {}, not {}", kMaxRateHz, config.rate_hz));
  if (config.reorder_blocks > kUdpMaxReorderBlocks)
    return refuse(fmt::format("reorder window must be 0 to {} blocks, not {}", kUdpMaxReorderBlocks,
                              config.reorder_blocks));
  if (config.max_packet_samples == 0) return refuse("the largest packet must hold at least one sample");
  // The window, plus every block one packet can touch, plus the block being closed.
  const std::uint64_t span = (std::uint64_t{config.max_packet_samples} + config.samples_per_block - 1) /
                             config.samples_per_block + 1;
  const std::uint64_t slots = config.reorder_blocks + span + 1;
  if (slots * config.samples_per_block * sample_bytes(config.dtype) > (std::uint64_t{1} << 32))
    return refuse(fmt::format("a staging ring of {} blocks of {} samples is too large; use smaller blocks or a "
                              "smaller reorder window", slots, config.samples_per_block));
  return StreamAssembler(config, sink, static_cast<std::uint32_t>(slots));
}

StreamAssembler::StreamAssembler(const StreamConfig& config, BlockSink& sink, std::uint32_t slots)
    : config_(config),
      sink_(&sink),
      slots_(slots),
      sample_bytes_(sample_bytes(config.dtype)),
      block_bytes_(std::size_t{config.samples_per_block} * sample_bytes(config.dtype)),
      staging_(block_bytes_ * slots),
      open_(slots),
      ranges_(std::size_t{slots} * kUdpMaxFragments),
      published_(slots, 0),
      rate_per_s_(static_cast<std::uint64_t>(std::llround(config.rate_hz))) {}

bool StreamAssembler::index_of(const PacketView& p, std::uint64_t& index) noexcept {
  if (p.format == PacketFormat::raw) {
    index = p.first_sample;
    return true;
  }
  if (!started_ || p.tsi != tsi_ || p.tsf != tsf_) {
    if (started_) return false;  // the source changed its timestamps: the caller restarts the stream
    first_integer_ts_ = p.integer_ts;
    first_fractional_ts_ = p.fractional_ts;
    tsi_ = p.tsi;
    tsf_ = p.tsf;
  }
  // Seconds since the first packet, modulo 2^64 like every index here.
  const std::uint64_t seconds = std::uint64_t{p.integer_ts} - std::uint64_t{first_integer_ts_};
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
      if (!(std::fabs(at) < kMaxExactIndex)) return false;  // no sensible index: restart on it
      index = static_cast<std::uint64_t>(std::llround(at));
      return true;
    }
    case Tsf::none: index = running_index_; return true;
  }
  return false;
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

void StreamAssembler::reset_slot(std::uint64_t block) noexcept { open(block) = Open{}; }

void StreamAssembler::close_oldest() noexcept {
  Open& o = open(head_);
  const std::uint32_t n = config_.samples_per_block;
  published_[head_ % slots_] = o.filled == n ? head_ + 1 : 0;
  if (o.filled == n) {
    if (sink_->publish(std::span(data(head_), block_bytes_), n, o.realtime_ns, o.monotonic_ns, o.flags))
      ++counters_.blocks_published;
    else
      ++counters_.blocks_dropped;
  } else {
    counters_.lost_samples += n - o.filled;
    counters_.discarded_samples += o.filled;
    ++counters_.gap_blocks;
    sink_->skip(1, core::GapReason::source_loss);
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
    for (std::uint64_t b = head_; b < head_ + std::min<std::uint64_t>(empty, slots_); ++b) {
      reset_slot(b);
      published_[b % slots_] = 0;
    }
    counters_.lost_samples += empty * n;
    counters_.gap_blocks += empty;
    sink_->skip(empty, core::GapReason::source_loss);
    head_ += empty;
  }
}

void StreamAssembler::finish() noexcept {
  if (!started_) return;
  const std::uint64_t n = config_.samples_per_block;
  while (head_ * n < max_end_) {
    Open& o = open(head_);
    const auto expected = static_cast<std::uint32_t>(std::min(n, max_end_ - head_ * n));
    if (o.filled == expected) {
      if (sink_->publish(std::span(data(head_), std::size_t{expected} * sample_bytes_), expected, o.realtime_ns,
                         o.monotonic_ns, o.flags))
        ++counters_.blocks_published;
      else
        ++counters_.blocks_dropped;
    } else {
      counters_.lost_samples += expected - o.filled;
      counters_.discarded_samples += o.filled;
      ++counters_.gap_blocks;
      sink_->skip(1, core::GapReason::source_loss);
    }
    reset_slot(head_);
    ++head_;
  }
}

AcceptStatus StreamAssembler::accept(const PacketView& p, std::uint64_t rx_realtime_ns,
                                     std::uint64_t rx_monotonic_ns) noexcept {
  ++counters_.packets;
  counters_.bytes += p.datagram_bytes;
  if (p.format == PacketFormat::raw && p.dtype != config_.dtype) {
    ++counters_.dtype_mismatch;
    return AcceptStatus::dtype_mismatch;
  }
  if (p.samples > config_.max_packet_samples || p.samples == 0) {
    ++counters_.oversized;
    return AcceptStatus::oversized;
  }
  const std::uint64_t n = config_.samples_per_block;
  std::uint64_t index = 0;
  bool restart = !index_of(p, index);
  if (!restart && started_) {
    const std::uint64_t head_pos = head_ * n;
    const std::uint64_t rel = index - start_index_;           // modulo 2^64
    const auto ahead = static_cast<std::int64_t>(rel - head_pos);  // < 0: before the oldest open block
    if (ahead < 0) {
      const std::uint64_t behind = 0 - static_cast<std::uint64_t>(ahead);
      if (behind < kUdpResyncBlocks * n) {
        // Whole blocks already published recently mean this one was received before: a duplicate.
        const std::uint64_t first_rel = head_pos - behind;   // head_pos >= behind unless before the start
        bool seen = behind <= head_pos && head_ - first_rel / n <= slots_ && first_rel + p.samples <= head_pos;
        for (std::uint64_t b = first_rel / n; seen && b <= (first_rel + p.samples - 1) / n; ++b)
          seen = published_[b % slots_] == b + 1;
        if (seen) {
          ++counters_.duplicates;
          return AcceptStatus::duplicate;
        }
        ++counters_.late;
        return AcceptStatus::late;
      }
      restart = true;
    } else if (static_cast<std::uint64_t>(ahead) > kUdpMaxJumpSamples) {
      restart = true;
    }
  }
  if (restart) {  // the source restarted (or changed its timestamps): close what is open, start afresh
    finish();
    ++counters_.resyncs;
    started_ = false;
    if (!index_of(p, index)) {  // no index even on a fresh start (a hopeless timestamp): refuse it
      ++counters_.late;
      return AcceptStatus::late;
    }
  }
  if (!started_) {
    started_ = true;
    start_index_ = index;
    head_ = 0;
    max_end_ = 0;
    format_ = p.format;
  }
  running_index_ = index + p.samples;

  const std::uint64_t first = index - start_index_;
  const std::uint64_t end = first + p.samples;
  const std::uint64_t last_block = (end - 1) / n;
  if (last_block >= head_ + slots_) advance_to(last_block - slots_ + 1);

  // Check every block the packet touches before writing any: a duplicate or overflow changes nothing.
  for (std::uint64_t b = first / n; b <= last_block; ++b) {
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
      return AcceptStatus::overflow;
    }
  }

  const bool swap = p.big_endian != (std::endian::native == std::endian::big);
  const std::uint32_t unit = swap_unit_bytes(config_.dtype);
  const std::uint64_t packet_ns = packet_time_ns(p);
  for (std::uint64_t b = first / n; b <= last_block; ++b) {
    const std::uint64_t lo64 = std::max(first, b * n);
    const auto lo = static_cast<std::uint32_t>(lo64 - b * n);
    const auto hi = static_cast<std::uint32_t>(std::min(end, (b + 1) * n) - b * n);
    const std::byte* src = p.payload + (lo64 - first) * sample_bytes_;
    std::byte* dst = data(b) + std::size_t{lo} * sample_bytes_;
    const std::size_t bytes = std::size_t{hi - lo} * sample_bytes_;
    if (swap)
      detail::copy_swapped(dst, src, bytes, unit);
    else
      std::memcpy(dst, src, bytes);

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

  // Close the blocks the window has passed (data reorder_blocks past their end came), then any
  // complete ones at the head.
  const std::uint64_t passed = max_end_ / n;
  if (passed > config_.reorder_blocks) advance_to(passed - config_.reorder_blocks);
  while (open(head_).filled == n) close_oldest();
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

#pragma once
// Shared pieces of the replay tests: a small arena, recordings with known samples, and reading a
// channel back block by block with the losses counted where they occur.
#include <doctest/doctest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "recording_writer.hpp"
#include "weir/core/channel.hpp"
#include "weir/replay/replay.hpp"

namespace weir::test {

inline constexpr std::uint64_t kRealtime0 = 1'700'000'000'000'000'000ULL;  // recorded stamps start here
inline constexpr std::uint64_t kMonotonic0 = 5'000'000'000'000ULL;

inline core::ArenaOptions replay_arena() {
  core::ArenaOptions o;
  o.slot_count = 64;
  o.value_bytes = 64;
  o.vector_dim = 0;
  o.channel_capacity = 8;
  o.channel_data_bytes = 8ULL << 20;
  return o;
}

/// A recorded u32 channel of 64-sample blocks at 64 kHz (1 ms each) with the given block runs.
inline RecChannel u32_channel(const std::string& name,
                              std::initializer_list<std::pair<std::uint64_t, std::uint64_t>> runs,
                              std::uint64_t first_sequence) {
  RecChannel c;
  c.name = name;
  c.dtype = "u32";
  c.rate_hz = 64000;
  c.units = "counts";
  c.labels = "adc, replayed";
  c.samples_per_block = 64;
  constexpr std::uint64_t kPeriodNs = 1'000'000;
  for (const auto& [first, count] : runs) {
    const std::uint64_t shift = (first - first_sequence) * kPeriodNs;
    for (const RecBlock& b : rec_blocks(first, count, 64, kRealtime0 + shift, kMonotonic0 + shift, kPeriodNs))
      c.blocks.push_back(b);
  }
  return c;
}

/// One block read back, with the losses the reader counted just before it.
struct ReadBlock {
  std::uint64_t sequence = 0, realtime_ns = 0, monotonic_ns = 0, lost_before = 0;
  std::uint32_t samples = 0, flags = 0;
  std::vector<std::byte> data;
};

struct ReadBack {
  std::vector<ReadBlock> blocks;
  std::uint64_t lost_after = 0;  // losses after the last block
  [[nodiscard]] std::uint64_t lost() const {
    std::uint64_t total = lost_after;
    for (const ReadBlock& b : blocks) total += b.lost_before;
    return total;
  }
};

/// Everything the channel's ring still holds, from the oldest block, read by a lossy reader.
inline ReadBack read_back(const core::Arena& arena, const std::string& channel) {
  auto reader =
      core::ChannelReader::open(arena, channel, core::ConsumerPolicy::lossy, "replay-test", core::StartAt::sequence, 0);
  REQUIRE(reader);
  ReadBack out;
  std::uint64_t pending = 0;
  for (;;) {
    core::BlockView b;
    std::uint64_t lost = 0;
    const core::NextStatus st = reader->next(b, lost);
    if (st == core::NextStatus::empty) break;
    if (st == core::NextStatus::lost) {
      pending += lost;
      continue;
    }
    ReadBlock r{b.sequence, b.realtime_ns, b.monotonic_ns, pending, b.samples, b.flags, {}};
    r.data.assign(b.data, b.data + std::size_t{b.samples} * reader->desc().sample_bytes);
    REQUIRE(reader->done(b));
    pending = 0;
    out.blocks.push_back(std::move(r));
  }
  out.lost_after = pending;
  return out;
}

/// Whether a block read back holds the u32 pattern of recorded block `seq`.
inline bool u32_block_ok(const ReadBlock& b, std::uint64_t seq) {
  for (std::uint32_t i = 0; i < b.samples; ++i) {
    std::uint32_t v = 0;
    std::memcpy(&v, b.data.data() + std::size_t{i} * 4, 4);
    if (v != u32_sample(seq, i)) return false;
  }
  return true;
}

/// Opens the files and replays them; fails the test on an error.
inline acq::ReplayReport replay(const core::Arena& arena, const std::vector<std::string>& files,
                                const acq::ReplayOptions& options) {
  auto recording = acq::open_recording(files);
  REQUIRE_MESSAGE(recording, (recording ? "" : recording.error().what));
  const std::atomic<bool> stop{false};
  auto report = acq::run_replay(arena, *recording, options, stop);
  REQUIRE_MESSAGE(report, (report ? "" : report.error().what));
  return *report;
}

}  // namespace weir::test

// A channel writer at full speed and a scope thread reading the oldest pyramid entries it is about
// to overwrite: envelope() must never hand out an entry from the next lap. Built for TSan as well.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <thread>
#include <vector>

#include "live_arena.hpp"
#include "weir/core/channel.hpp"

using namespace weir::core;

namespace {

constexpr auto kRunFor = std::chrono::milliseconds(1500);
constexpr std::uint32_t kBlock = 1024;     // samples per block
constexpr std::uint32_t kRingBlocks = 16;  // the level-0 entries reach this far back, less a block
// Sample i is i mod kPeriod: every entry's min is its first sample and its max its last, and an entry
// a lap later (a multiple of the ring's reach further on, at any level) holds other values.
constexpr std::uint64_t kPeriod = 3ULL << 18;
static_assert(kPeriod % (std::uint64_t{kPyramidFactor} * kPyramidFactor * kPyramidFactor) == 0);

struct Tally {
  std::uint64_t checked = 0;  // columns with an entry
  std::uint64_t wrong = 0;
  std::uint64_t empty = 0;  // NaN columns
};

// The envelope of [first, first + count) in columns `width` samples wide, against the values the
// writer put there. envelope() may draw it from a coarser level (the writer moves on while we pick),
// so a column holds whole entries of some level, and its min is the first sample of the first entry
// folded into it: that sample's position must fall in this column (column 0 also takes an entry
// that starts before `first`). An entry from a later lap fails that: it comes from too far on.
void check_span(const Arena& arena, std::uint32_t channel, std::uint64_t first, std::uint64_t count,
                std::uint64_t width, Tally& t) {
  constexpr std::uint64_t kWidest = std::uint64_t{kPyramidFactor} * kPyramidFactor * kPyramidFactor;
  if (first < kWidest || first % kPeriod + count >= kPeriod) return;  // values must rise through the window
  std::vector<float> mins(count / width), maxs(count / width);
  envelope(arena, channel, first, count, mins, maxs);
  const std::uint64_t lap_start = first / kPeriod * kPeriod;
  for (std::size_t c = 0; c < mins.size(); ++c) {
    if (std::isnan(mins[c])) {
      ++t.empty;
      continue;
    }
    ++t.checked;
    const auto lo = static_cast<std::uint64_t>(mins[c]);
    const auto hi = static_cast<std::uint64_t>(maxs[c]);
    // Positions of those values in this lap of kPeriod, or the one before for an entry starting
    // before `first`.
    std::uint64_t at = lap_start + lo;
    if (at >= first + count) at -= kPeriod;
    const std::uint64_t column = at < first ? 0 : (at - first) / width;
    const bool whole = lo % kPyramidFactor == 0 && hi > lo && (hi + 1 - lo) % kPyramidFactor == 0;
    const bool here = at + kWidest > first && column == c && at + (hi - lo) < first + count + kWidest;
    t.wrong += whole && here ? 0U : 1U;
  }
}

}  // namespace

TEST_CASE("envelope() never returns a pyramid entry the writer overwrote while it read") {
  weir::test::ScratchArena scratch("pyrstress");
  const Arena& arena = scratch.arena();
  ChannelSpec s;
  s.name = "lap";
  s.dtype = Dtype::f32;
  s.rate_hz = 1e6;
  s.samples_per_block = kBlock;
  s.ring_blocks = kRingBlocks;
  const auto index = create_channel(arena, s);
  REQUIRE(index);
  auto writer = ChannelWriter::open(arena, "lap");
  REQUIRE(writer);
  const ChannelDesc& d = writer->desc();
  std::atomic<bool> stop{false};

  std::thread producer([&] {
    std::vector<float> block(kBlock);
    for (std::uint64_t at = 0; !stop.load(std::memory_order_relaxed); at += kBlock) {
      for (std::uint32_t i = 0; i < kBlock; ++i) block[i] = static_cast<float>((at + i) % kPeriod);
      std::span<std::byte> out;
      if (writer->claim(out) != ClaimStatus::ok) break;  // no lossless reader: never
      std::memcpy(out.data(), block.data(), sizeof(float) * kBlock);
      writer->publish(kBlock);
    }
  });

  Tally level0, upper;
  const std::uint64_t reach0 = std::uint64_t{d.pyramid_entries} * kPyramidFactor;  // level 0's reach in samples
  const std::uint64_t span1 = std::uint64_t{kPyramidFactor} * kPyramidFactor;
  const auto until = std::chrono::steady_clock::now() + kRunFor;
  while (std::chrono::steady_clock::now() < until) {
    const std::uint64_t written = d.samples_written.load(std::memory_order_acquire);
    // Level 0, its oldest entries: the ones the writer reuses next.
    if (written >= reach0) {
      const std::uint64_t first = (written - reach0 + kBlock) / kPyramidFactor * kPyramidFactor;
      check_span(arena, *index, first, reach0 / 2, kPyramidFactor, level0);
    }
    // Level 1, from further back than level 0 reaches.
    if (written >= 4 * reach0) {
      const std::uint64_t first = (written - 4 * reach0) / span1 * span1;
      check_span(arena, *index, first, 2 * reach0, span1, upper);
    }
  }
  stop.store(true, std::memory_order_relaxed);
  producer.join();

  CHECK(level0.wrong == 0);
  CHECK(upper.wrong == 0);
  // Not vacuous: columns were drawn at both levels, not just left empty. (Near the writer's edge
  // envelope() often goes a level coarser or gives up a read: fewer drawn columns, the slower this
  // build runs next to the writer, e.g. under TSan.)
  CHECK(level0.checked > 1000);
  CHECK(4 * level0.checked > level0.empty);
  CHECK(upper.checked > 1000);
  CHECK(4 * upper.checked > upper.empty);
  MESSAGE("level 0: " << level0.checked << " columns checked, " << level0.empty << " empty; level 1: "
                      << upper.checked << " checked, " << upper.empty << " empty");
}

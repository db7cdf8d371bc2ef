#include <doctest/doctest.h>

#include <cstdint>

#include "weir/dsp/sample_clock.hpp"

using weir::dsp::SampleClock;

namespace {

weir_shard_block stamped(std::uint64_t first_sample, std::uint32_t count, std::uint64_t realtime_ns) {
  weir_shard_block b{};
  b.count = count;
  b.first_sample = first_sample;
  b.realtime_ns = realtime_ns;
  return b;
}

}  // namespace

TEST_SUITE("dsp.sample_clock") {

TEST_CASE("a sample's time comes from the block that holds it, rounded to the ns") {
  SampleClock clock(4, 3.0);  // 3 samples per second: offsets of 1/3 s round
  CHECK(clock.empty());
  CHECK(clock.realtime_of(5) == 0);
  clock.add(stamped(0, 3, 1'000'000'000));
  clock.add(stamped(3, 3, 2'000'000'007));  // stamps need not follow the nominal rate
  CHECK(clock.realtime_of(0) == 1'000'000'000);
  CHECK(clock.realtime_of(1) == 1'333'333'333);
  CHECK(clock.realtime_of(2) == 1'666'666'667);
  CHECK(clock.realtime_of(3) == 2'000'000'007);
  CHECK(clock.realtime_of(5) == 2'666'666'674);
  CHECK(clock.realtime_of(7) == 3'333'333'340);  // past the newest: extrapolated from it
  CHECK(SampleClock::offset_time(1'000'000'000, -1.0, 3.0) == 666'666'667);  // before the block
}

TEST_CASE("the oldest stamps make room, and an index before them is extrapolated from the oldest kept") {
  SampleClock clock(2, 1000.0);
  clock.add(stamped(0, 10, 100'000'000));
  clock.add(stamped(10, 10, 110'000'500));
  clock.add(stamped(20, 10, 120'000'000));  // drops the first
  CHECK(clock.realtime_of(15) == 110'000'500 + 5'000'000);
  CHECK(clock.realtime_of(5) == 110'000'500 - 5'000'000);
  clock.add(stamped(30, 0, 9));  // an empty block is no stamp
  CHECK(clock.realtime_of(30) == 120'000'000 + 10'000'000);
  clock.clear();
  CHECK(clock.empty());
  clock.add(stamped(30, 10, 50'000'000));
  CHECK(clock.realtime_of(31) == 51'000'000);
}

}  // TEST_SUITE

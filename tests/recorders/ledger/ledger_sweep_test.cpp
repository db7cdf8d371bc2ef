// The ledger's arithmetic alone (the audit's private sweep): overlaps, markers, tails, and sequence
// spaces far too long to walk block by block.
#include <doctest/doctest.h>

#include <chrono>

#include "ledger_sweep.hpp"
#include "weir/core/arena_layout.hpp"
#include "weir/h5/recording_format.hpp"

using namespace weir;
using namespace weir::ledger;
using detail::Evidence;
using detail::Span;
using h5::GapReason;

namespace {

constexpr auto kRecorded = detail::kRecordedKind;
constexpr auto kDown = static_cast<std::uint8_t>(GapReason::recorder_down);

std::uint8_t reason(GapReason r) { return static_cast<std::uint8_t>(r); }
std::uint64_t gap(const ChannelLedger& c, GapReason r) { return c.gaps[static_cast<std::size_t>(r)]; }

}  // namespace

TEST_SUITE("recorders.ledger.sweep") {

TEST_CASE("consecutive rows make one span, gap-flagged rows a source_loss span, a repeat starts a new one") {
  std::vector<Span> spans;
  detail::add_blocks({0, 1, 2, 3, 7, 8, 8, 9}, {0, 0, core::kBlockGapFlag, 0, 0, 0, 0, 0}, spans);
  REQUIRE(spans.size() == 5);
  CHECK(spans[0].lo == 0);
  CHECK(spans[0].hi == 2);
  CHECK(spans[1].kind == reason(GapReason::source_loss));
  CHECK(spans[3].lo == 7);
  CHECK(spans[3].hi == 9);
  CHECK(spans[4].lo == 8);
  CHECK(spans[4].hi == 10);
  const ChannelLedger c = detail::sweep(Evidence{spans, 0, 0, {}, {}}, kDown);
  CHECK(c.first == 0);
  CHECK(c.end == 10);
  CHECK(c.recorded == 6);  // 0 1 3 7 8 9
  CHECK(c.duplicates == 1);  // 8
  CHECK(gap(c, GapReason::source_loss) == 1);
  CHECK(c.unaccounted == 3);  // 4 5 6
}

TEST_CASE("gap-flagged rows count under the reason in their flags' low 8 bits; a bare flag, as files before "
          "format 1.5 have, and a reason this build does not know under source_loss") {
  const auto flagged = [](GapReason r) { return core::kBlockGapFlag | static_cast<std::uint32_t>(r); };
  std::vector<Span> spans;
  detail::add_blocks({0, 1, 2, 3, 4, 5, 6, 7},
                     {0, flagged(GapReason::kernel_drop), flagged(GapReason::kernel_drop), flagged(GapReason::late),
                      core::kBlockGapFlag, core::kBlockGapFlag | 0xEEU, flagged(GapReason::driver_error), 0},
                     spans);
  REQUIRE(spans.size() == 6);
  CHECK(spans[1].kind == reason(GapReason::kernel_drop));
  CHECK(spans[1].lo == 1);
  CHECK(spans[1].hi == 3);  // one span of the run
  CHECK(spans[2].kind == reason(GapReason::late));
  CHECK(spans[3].kind == reason(GapReason::source_loss));
  CHECK(spans[3].hi == 6);  // the bare flag and the unknown reason
  const ChannelLedger c = detail::sweep(Evidence{spans, 0, 0, {}, {}}, kDown);
  CHECK(c.recorded == 2);
  CHECK(gap(c, GapReason::kernel_drop) == 2);
  CHECK(gap(c, GapReason::late) == 1);
  CHECK(gap(c, GapReason::source_loss) == 2);
  CHECK(gap(c, GapReason::driver_error) == 1);
  CHECK(gap(c, GapReason::lapped) == 0);
  CHECK(ledger::lost_blocks(c) == 6);
}

TEST_CASE("a record's first below the files and written beyond them: unaccounted before, a tail after") {
  Evidence e;
  e.spans = {Span{10, 20, kRecorded}, Span{20, 20, reason(GapReason::recorder_restart)}};
  e.first = 4;
  e.written = 30;
  e.dropped_at_source = 2;
  const ChannelLedger c = detail::sweep(e, reason(GapReason::disk_error));
  CHECK(c.first == 4);
  CHECK(c.end == 30);
  CHECK(c.unaccounted == 6);
  CHECK(c.tail == 10);
  CHECK(gap(c, GapReason::disk_error) == 10);
  CHECK(c.written == 28);
  CHECK(c.recorded + 10 + c.unaccounted == c.end - c.first);
  // A record's first above the files' lowest block: the files' evidence wins.
  e.first = 15;
  CHECK(detail::sweep(e, kDown).first == 10);
}

TEST_CASE("a trillion-block run is swept in no time: never block by block") {
  constexpr std::uint64_t kHuge = 1'000'000'000'000;
  Evidence e;
  e.spans = {Span{0, kHuge, kRecorded}, Span{kHuge / 2, kHuge / 2 + 1000, reason(GapReason::lapped)},
             Span{kHuge + 5, 2 * kHuge, reason(GapReason::before_start)}};
  e.written = 3 * kHuge;
  const auto start = std::chrono::steady_clock::now();
  const ChannelLedger c = detail::sweep(e, kDown);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(100));
  CHECK(c.recorded == kHuge);
  CHECK(c.duplicates == 1000);
  CHECK(c.unaccounted == 5);
  CHECK(gap(c, GapReason::before_start) == kHuge - 5);
  CHECK(c.tail == kHuge);
  CHECK(c.end == 3 * kHuge);

  // Two million recorded blocks, every 1000th missing: one sort of their spans.
  std::vector<std::uint64_t> sequence;
  for (std::uint64_t s = 0; s < 2'000'000; ++s)
    if (s % 1000 != 999) sequence.push_back(s);
  const std::vector<std::uint32_t> flags(sequence.size(), 0);
  Evidence many;
  const auto t0 = std::chrono::steady_clock::now();
  detail::add_blocks(sequence, flags, many.spans);
  const ChannelLedger m = detail::sweep(std::move(many), kDown);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
  CHECK(m.recorded == sequence.size());
  CHECK(m.unaccounted == 1999);  // the last hole is past the last block: not in [first, end)
  CHECK(m.end == 1'999'999);
}

TEST_CASE("incarnations add end to end") {
  ChannelLedger total;
  ChannelLedger a = detail::sweep(Evidence{{Span{0, 10, kRecorded}}, 0, 0, {}, {}}, kDown);
  ChannelLedger b = detail::sweep(Evidence{{Span{0, 5, kRecorded}, Span{7, 9, kRecorded}}, 1, 0, {}, {}}, kDown);
  detail::add_incarnation(total, a);
  detail::add_incarnation(total, b);
  CHECK(total.incarnations == 2);
  CHECK(total.first == 0);
  CHECK(total.end == 19);
  CHECK(total.recorded == 17);
  CHECK(total.unaccounted == 2);
  CHECK(total.written == 20);
}

}  // TEST_SUITE

TEST_SUITE("recorders.ledger.sweep") {

TEST_CASE("files retention deleted: the stretches where a deleted segment was count as deleted, not unaccounted") {
  // Segments 0..3 held [0,10) [10,20) [20,30) [30,40); 0 and 2 were deleted, 1 and 3 remain.
  const std::vector<detail::Reach> remaining{{3, 30, 40}, {1, 10, 20}};
  const auto holes = detail::deleted_spans(remaining, {0, 2}, 0, 45);
  REQUIRE(holes.size() == 2);
  CHECK(holes[0].lo == 0);
  CHECK(holes[0].hi == 10);
  CHECK(holes[1].lo == 20);
  CHECK(holes[1].hi == 30);
  std::vector<Span> spans{{10, 20, kRecorded}, {30, 40, kRecorded}};
  spans.insert(spans.end(), holes.begin(), holes.end());
  const ChannelLedger c = detail::sweep(Evidence{spans, 0, 0, std::uint64_t{0}, std::uint64_t{45}}, kDown);
  CHECK(c.recorded == 20);
  CHECK(c.deleted == 20);
  CHECK(c.unaccounted == 0);
  CHECK(c.tail == 5);  // after the last remaining file, no deleted segment: still the tail's
  CHECK(lost_blocks(c) == 5);
}

TEST_CASE("a deleted stretch never hides a duplicate or a gap row, and a wholly deleted run is all deleted") {
  const auto all = detail::deleted_spans({}, {0, 1}, 5, 25);
  REQUIRE(all.size() == 1);
  CHECK(all[0].lo == 5);
  CHECK(all[0].hi == 25);
  const ChannelLedger gone = detail::sweep(Evidence{all, 0, 0, std::uint64_t{5}, std::uint64_t{25}}, kDown);
  CHECK(gone.deleted == 20);
  CHECK(gone.unaccounted == 0);
  CHECK(gone.tail == 0);
  // A gap row inside a deleted stretch keeps its reason.
  std::vector<Span> spans{{0, 10, detail::kDeletedKind}, {4, 6, reason(GapReason::lapped)}};
  const ChannelLedger c = detail::sweep(Evidence{spans, 0, 0, std::uint64_t{0}, std::uint64_t{10}}, kDown);
  CHECK(c.deleted == 8);
  CHECK(gap(c, GapReason::lapped) == 2);
  CHECK(c.duplicates == 0);
  // No deleted segment between two files: their hole stays unaccounted.
  const auto after_last = detail::deleted_spans({{0, 0, 10}, {2, 20, 30}}, {5}, 0, 35);
  REQUIRE(after_last.size() == 1);  // only after the last remaining file (segment 5 > 2): [10, 20) stays unaccounted
  CHECK(after_last[0].lo == 30);
  CHECK(after_last[0].hi == 35);
}

}  // TEST_SUITE

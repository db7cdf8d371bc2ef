// Unit tests of the scope's pure parts: the braille canvas, the envelope plot (including a spike
// written through a real channel and read back through its pyramid), the sample history and keys.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"
#include "weir/scope/braille_canvas.hpp"
#include "weir/scope/scope_terminal.hpp"
#include "weir/scope/scope_trace.hpp"
#include "weir/scope/scope_view.hpp"

namespace {

using weir::scope::BrailleCanvas;
using weir::scope::YRange;

std::string utf8(char32_t c) {
  std::string out;
  weir::scope::append_utf8(out, c);
  return out;
}

// Columns of cell row `row` that hold any dot.
std::vector<std::size_t> inked_columns(const BrailleCanvas& canvas, std::size_t row) {
  std::vector<std::size_t> cols;
  for (std::size_t c = 0; c < canvas.cols(); ++c)
    if (canvas.cell(c, row) != weir::scope::kBrailleBlank) cols.push_back(c);
  return cols;
}

// An arena removed when the test ends, pass or fail.
class TempArena {
 public:
  TempArena() : where_("t.scope." + std::to_string(getpid())) {
    weir::core::ArenaOptions o;
    o.slot_count = 64;
    o.value_bytes = 64;
    o.vector_dim = 0;
    o.channel_capacity = 2;
    o.channel_data_bytes = 4ULL << 20;
    arena_ = std::make_unique<weir::core::Arena>(std::move(weir::core::Arena::create(where_, o).value()));
  }
  TempArena(const TempArena&) = delete;
  TempArena& operator=(const TempArena&) = delete;
  ~TempArena() {
    arena_.reset();
    (void)weir::core::Arena::remove(where_);
  }
  [[nodiscard]] const weir::core::Arena& arena() const { return *arena_; }

 private:
  std::string where_;
  std::unique_ptr<weir::core::Arena> arena_;
};

}  // namespace

TEST_SUITE("tools.scope") {

TEST_CASE("each dot of a cell maps to its braille code point") {
  // Unicode braille numbers dots 1-3 and 7 down the left column, 4-6 and 8 down the right.
  const char32_t expected[4][2] = {{U'\u2801', U'\u2808'}, {U'\u2802', U'\u2810'}, {U'\u2804', U'\u2820'},
                                   {U'\u2840', U'\u2880'}};
  for (std::size_t y = 0; y < 4; ++y) {
    for (std::size_t x = 0; x < 2; ++x) {
      BrailleCanvas canvas(1, 1);
      canvas.set(x, y);
      CHECK(canvas.cell(0, 0) == expected[y][x]);
    }
  }
}

TEST_CASE("a vertical bar lights every dot between its ends across cells") {
  BrailleCanvas canvas(1, 2);
  canvas.vbar(0, 7, 0);  // the whole left column, given bottom first
  CHECK(canvas.cell(0, 0) == U'\u2847');
  CHECK(canvas.cell(0, 1) == U'\u2847');
  canvas.clear();
  canvas.vbar(1, 2, 5);  // right column, dots 2..5: the lower half of cell 0, the upper half of cell 1
  CHECK(canvas.cell(0, 0) == U'\u28A0');
  CHECK(canvas.cell(0, 1) == U'\u2818');
  CHECK(canvas.row_utf8(0) == utf8(U'\u28A0'));
}

TEST_CASE("rows draw empty cells as spaces and dots outside the canvas are ignored") {
  BrailleCanvas canvas(3, 1);
  canvas.set(2, 0);
  canvas.set(6, 0);
  canvas.set(0, 4);
  CHECK(canvas.row_utf8(0) == " " + utf8(U'\u2801') + " ");
}

TEST_CASE("a spike in one bucket of the envelope is drawn whether buckets are folded or stretched") {
  for (const std::size_t buckets : {7U, 40U, 160U, 5000U}) {
    CAPTURE(buckets);
    std::vector<float> mins(buckets, 0.0F);
    std::vector<float> maxs(buckets, 0.0F);
    const std::size_t spike = buckets * 3 / 5;
    maxs[spike] = 1.0F;
    BrailleCanvas canvas(40, 8);  // 80 dot columns
    const YRange range = weir::scope::auto_range(mins, maxs);
    weir::scope::plot_envelope(canvas, mins, maxs, range);
    const auto top = inked_columns(canvas, 0);
    REQUIRE(!top.empty());
    CHECK(top.front() >= spike * canvas.cols() / buckets);  // only the cells the spike's bucket covers
    CHECK(top.back() <= ((spike + 1) * canvas.cols() + buckets - 1) / buckets);
    CHECK(inked_columns(canvas, canvas.rows() - 1).size() == canvas.cols());  // the zero baseline
  }
}

TEST_CASE("a one-sample spike written to a channel shows in the drawn envelope at every zoom") {
  TempArena temp;
  weir::core::ChannelSpec spec;
  spec.name = "spiky";
  spec.rate_hz = 1e5;
  spec.units = "V";
  spec.samples_per_block = 256;
  spec.ring_blocks = 64;
  REQUIRE(weir::core::create_channel(temp.arena(), spec).has_value());
  auto writer = weir::core::ChannelWriter::open(temp.arena(), "spiky");
  REQUIRE(writer.has_value());
  constexpr std::uint64_t kBlocks = 48;
  constexpr std::uint64_t kSpike = 9001;  // mid-block, mid-entry
  for (std::uint64_t b = 0; b < kBlocks; ++b) {
    std::span<std::byte> out;
    REQUIRE(writer->claim(out) == weir::core::ClaimStatus::ok);
    std::vector<float> samples(spec.samples_per_block, 0.0F);
    if (kSpike / spec.samples_per_block == b) samples[kSpike % spec.samples_per_block] = 2.5F;
    std::memcpy(out.data(), samples.data(), samples.size() * sizeof(float));
    writer->publish(spec.samples_per_block);
  }
  const auto index = weir::core::find_channel(temp.arena(), "spiky");
  REQUIRE(index.has_value());
  const std::uint64_t written = kBlocks * spec.samples_per_block;
  for (const std::uint64_t span : {256U, 1024U, 4096U, 12288U}) {
    CAPTURE(span);
    const std::uint64_t first = kSpike - span / 3;
    BrailleCanvas canvas(50, 6);
    const std::size_t buckets = std::min<std::size_t>(canvas.dot_width(), span / 16);
    std::vector<float> mins(buckets);
    std::vector<float> maxs(buckets);
    weir::core::envelope(temp.arena(), *index, first, std::min(span, written - first), mins, maxs);
    const YRange range = weir::scope::auto_range(mins, maxs);
    CHECK(range.hi >= 2.5);
    weir::scope::plot_envelope(canvas, mins, maxs, range);
    CHECK(!inked_columns(canvas, 0).empty());
  }
}

TEST_CASE("the sample history finds the last rising crossing and restarts after a gap") {
  weir::scope::SampleHistory history(64);
  const std::vector<float> wave{0, 1, 0, 1, 0, 0, 1, 1};
  history.append(100, wave);
  CHECK(history.begin() == 100);
  CHECK(history.end() == 108);
  CHECK(history.last_crossing(0.5F, 0, 1000) == std::optional<std::uint64_t>{106});
  CHECK(history.last_crossing(0.5F, 0, 105) == std::optional<std::uint64_t>{103});
  CHECK(!history.last_crossing(2.0F, 0, 1000).has_value());
  std::vector<float> mins(2);
  std::vector<float> maxs(2);
  history.envelope(104, 4, mins, maxs);
  CHECK(mins == std::vector<float>{0, 1});
  CHECK(maxs == std::vector<float>{0, 1});
  history.append(200, wave);  // not contiguous: only the new run is kept
  CHECK(history.begin() == 200);
  CHECK(!history.covers(100, 8));
}

TEST_CASE("keys decode to scope actions, arrows included") {
  std::vector<weir::scope::Key> keys;
  weir::scope::decode_keys("q +-\x1b[A\x1b[Bjkt?", [&keys](weir::scope::Key k) { keys.push_back(k); });
  using K = weir::scope::Key;
  CHECK(keys == std::vector<K>{K::quit, K::pause, K::zoom_in, K::zoom_out, K::level_up, K::level_down,
                               K::level_down, K::level_up, K::toggle_trigger});
}

TEST_CASE("values are written with SI prefixes and three significant digits") {
  CHECK(weir::scope::format_si(20000, "Hz") == "20 kHz");
  CHECK(weir::scope::format_si(-0.25, "V") == "-250 mV");
  CHECK(weir::scope::format_si(0.04, "s") == "40 ms");
  CHECK(weir::scope::format_si(999.9, "V") == "1 kV");
  CHECK(weir::scope::format_si(0, "V") == "0 V");
}

}  // TEST_SUITE

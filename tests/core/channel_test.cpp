#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

#include "arena_guard.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/signals.hpp"

using namespace weir::core;
using weir::test::ArenaGuard;
using weir::test::unique_name;

namespace {

struct Fixture {
  explicit Fixture(std::uint64_t channel_bytes = 4ULL << 20, std::uint32_t channels = 4)
      : guard(unique_name("chan")), arena(std::move(Arena::create(guard.where(), options(channel_bytes, channels)).value())) {}
  static ArenaOptions options(std::uint64_t channel_bytes, std::uint32_t channels) {
    ArenaOptions o;
    o.slot_count = 64;
    o.value_bytes = 64;
    o.vector_dim = 0;
    o.channel_capacity = channels;
    o.channel_data_bytes = channel_bytes;
    return o;
  }
  ArenaGuard guard;
  Arena arena;
};

ChannelSpec spec(const std::string& name, std::uint32_t block = 256, std::uint32_t ring = 8) {
  ChannelSpec s;
  s.name = name;
  s.dtype = Dtype::f32;
  s.rate_hz = 1e6;
  s.units = "V";
  s.samples_per_block = block;
  s.ring_blocks = ring;
  s.wait_timeout_ns = 200'000'000;
  return s;
}

// Writes one block whose samples are seq*1000 + i, so a reader can check every value.
void write_block(ChannelWriter& w, std::uint32_t n) {
  std::span<std::byte> out;
  REQUIRE(w.claim(out) == ClaimStatus::ok);
  std::vector<float> v(n);
  for (std::uint32_t i = 0; i < n; ++i) v[i] = static_cast<float>(w.next_sequence() * 1000 + i);
  std::memcpy(out.data(), v.data(), n * sizeof(float));
  w.publish(n);
}

bool block_ok(const BlockView& b) {
  for (std::uint32_t i = 0; i < b.samples; ++i) {
    float f;
    std::memcpy(&f, b.data + i * sizeof(float), sizeof(f));
    if (f != static_cast<float>(b.sequence * 1000 + i)) return false;
  }
  return true;
}

}  // namespace

TEST_SUITE("core.channel") {

TEST_CASE("a reader follows a writer block by block, in place") {
  Fixture f;
  REQUIRE(create_channel(f.arena, spec("adc0")));
  auto w = ChannelWriter::open(f.arena, "adc0");
  REQUIRE(w);
  auto r = ChannelReader::open(f.arena, "adc0", ConsumerPolicy::lossy, "test", StartAt::oldest);
  REQUIRE(r);
  BlockView b;
  std::uint64_t lost = 0;
  CHECK(r->next(b, lost) == NextStatus::empty);
  for (int i = 0; i < 5; ++i) write_block(*w, 256);
  for (std::uint64_t seq = 0; seq < 5; ++seq) {
    REQUIRE(r->next(b, lost) == NextStatus::ok);
    CHECK(b.sequence == seq);
    CHECK(b.samples == 256);
    CHECK(b.realtime_ns > 0);
    CHECK(block_ok(b));
    CHECK(r->done(b));
  }
  CHECK(r->next(b, lost) == NextStatus::empty);
  CHECK(r->row().blocks_read.load() == 5);
  CHECK(r->row().samples_read.load() == 5 * 256);
  auto info = list_channels(f.arena);
  REQUIRE(info.size() == 1);
  CHECK(info[0].blocks_written == 5);
  CHECK(info[0].samples_written == 1280);
  REQUIRE(info[0].consumers.size() == 1);
  CHECK(info[0].consumers[0].name == "test");
  CHECK(info[0].consumers[0].lag == 0);
}

TEST_CASE("a reader lapped many times over counts exactly the blocks it lost") {
  Fixture f;
  REQUIRE(create_channel(f.arena, spec("fast", 64, 8)));
  auto w = ChannelWriter::open(f.arena, "fast");
  REQUIRE(w);
  auto r = ChannelReader::open(f.arena, "fast", ConsumerPolicy::lossy, "slow", StartAt::oldest);
  REQUIRE(r);
  std::uint64_t read = 0, lost_total = 0;
  constexpr std::uint64_t kWritten = 1000;
  for (std::uint64_t i = 0; i < kWritten; ++i) {
    write_block(*w, 64);
    if (i % 37 != 0) continue;  // the reader wakes up now and then and drains what is there
    for (;;) {
      BlockView b;
      std::uint64_t lost = 0;
      const NextStatus st = r->next(b, lost);
      if (st == NextStatus::empty) break;
      if (st == NextStatus::lost) {
        lost_total += lost;
        continue;
      }
      CHECK(block_ok(b));
      if (r->done(b)) ++read;
    }
  }
  for (;;) {
    BlockView b;
    std::uint64_t lost = 0;
    const NextStatus st = r->next(b, lost);
    if (st == NextStatus::empty) break;
    if (st == NextStatus::lost) lost_total += lost;
    else if (r->done(b)) ++read;
  }
  CHECK(lost_total > 0);
  CHECK(read + lost_total == kWritten);
  CHECK(r->row().blocks_lost.load() == lost_total);
}

TEST_CASE("a gap the writer skips is counted lost by every reader, short or longer than the ring") {
  Fixture f;
  REQUIRE(create_channel(f.arena, spec("gappy", 64, 8)));
  auto w = ChannelWriter::open(f.arena, "gappy");
  REQUIRE(w);
  auto lossy = ChannelReader::open(f.arena, "gappy", ConsumerPolicy::lossy, "lossy", StartAt::oldest);
  auto lossless = ChannelReader::open(f.arena, "gappy", ConsumerPolicy::lossless, "lossless", StartAt::oldest);
  REQUIRE(lossy);
  REQUIRE(lossless);
  struct Tally {
    std::vector<std::uint64_t> sequences;
    std::uint64_t lost = 0;
    std::uint64_t lost_timeout = 0;  // the run skipped for timeout (1..3)
    std::uint64_t lost_source = 0;   // the run skipped for source_loss (5..24)
  };
  const auto drain = [](ChannelReader& r, Tally& t) {
    for (;;) {
      BlockView b;
      std::uint64_t lost = 0;
      const NextStatus st = r.next(b, lost);
      if (st == NextStatus::empty) return;
      if (st == NextStatus::lost) {
        t.lost += lost;
        if (lost_reason(b.flags) == GapReason::timeout) t.lost_timeout += lost;
        if (lost_reason(b.flags) == GapReason::source_loss) t.lost_source += lost;
        continue;
      }
      CHECK(block_ok(b));
      if (r.done(b)) t.sequences.push_back(b.sequence);
    }
  };
  Tally a, b;
  write_block(*w, 64);   // 0
  w->skip(3, GapReason::timeout);  // 1..3: shorter than the ring
  write_block(*w, 64);   // 4
  drain(*lossy, a);
  drain(*lossless, b);
  w->skip(20, GapReason::source_loss);  // 5..24: longer than the ring; the lossless reader has read everything
  drain(*lossless, b);   // a lossless writer waits for its readers to pass the gap like any block
  write_block(*w, 64);   // 25
  write_block(*w, 64);   // 26
  drain(*lossy, a);
  drain(*lossless, b);
  for (const Tally* t : {&a, &b}) {
    CHECK(t->sequences == std::vector<std::uint64_t>{0, 4, 25, 26});
    CHECK(t->lost == 23);
    CHECK(t->lost_timeout == 3);  // every lost block under the writer's reason, the jumped-over ones too
    CHECK(t->lost_source == 20);
  }
  CHECK(lossy->row().blocks_lost.load() == 23);
  CHECK(w->next_sequence() == 27);
  const auto info = list_channels(f.arena);
  CHECK(info[0].samples_written == 4 * 64);
  CHECK(info[0].dropped_at_source == 0);
}

TEST_CASE("a reader lapped across data and a long gap counts the data lapped and the gap for its reason") {
  Fixture f;
  REQUIRE(create_channel(f.arena, spec("mixed", 64, 8)));
  auto w = ChannelWriter::open(f.arena, "mixed");
  REQUIRE(w);
  auto r = ChannelReader::open(f.arena, "mixed", ConsumerPolicy::lossy, "slow", StartAt::oldest);
  REQUIRE(r);
  for (int i = 0; i < 10; ++i) write_block(*w, 64);  // 0..9, never read
  w->skip(30, GapReason::kernel_drop);                 // 10..39, the ring holds 32..39
  write_block(*w, 64);                                 // 40
  std::vector<std::pair<GapReason, std::uint64_t>> losses;
  std::vector<std::uint64_t> read;
  for (;;) {
    BlockView b;
    std::uint64_t lost = 0;
    const NextStatus st = r->next(b, lost);
    if (st == NextStatus::empty) break;
    if (st == NextStatus::lost) {
      losses.emplace_back(lost_reason(b.flags), lost);
      continue;
    }
    if (r->done(b)) read.push_back(b.sequence);
  }
  using Loss = std::pair<GapReason, std::uint64_t>;
  // 0..9 overwritten before the reader came: lapped; then the gap's run 10..40 under its reason, in
  // as many pieces as the reader met it (the jumped-over part, then the gap blocks left in the ring).
  REQUIRE(!losses.empty());
  CHECK(losses.front() == Loss{GapReason::lapped, 10});
  std::uint64_t gap = 0;
  for (std::size_t i = 1; i < losses.size(); ++i) {
    CHECK(losses[i].first == GapReason::kernel_drop);
    gap += losses[i].second;
  }
  CHECK(gap == 30);
  CHECK(read == std::vector<std::uint64_t>{40});
}

TEST_CASE("a full lossless reader makes the writer wait, then drop at the source and count it") {
  Fixture f;
  ChannelSpec s = spec("ll", 64, 4);
  s.wait_timeout_ns = 20'000'000;
  REQUIRE(create_channel(f.arena, s));
  auto w = ChannelWriter::open(f.arena, "ll");
  REQUIRE(w);
  auto r = ChannelReader::open(f.arena, "ll", ConsumerPolicy::lossless, "archiver", StartAt::oldest);
  REQUIRE(r);
  for (int i = 0; i < 4; ++i) write_block(*w, 64);
  std::span<std::byte> out;
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(w->claim(out) == ClaimStatus::dropped);  // ring full for the lossless reader
  CHECK(std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(15));
  CHECK(list_channels(f.arena)[0].dropped_at_source == 1);
  // The reader frees one slot while the writer waits: the writer gets through.
  std::thread reader([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    BlockView b;
    std::uint64_t lost = 0;
    REQUIRE(r->next(b, lost) == NextStatus::ok);
    CHECK(r->done(b));
  });
  ChannelSpec slow = s;
  CHECK(w->claim(out) == ClaimStatus::ok);
  w->publish(64);
  reader.join();
  std::uint64_t read = 0, lost = 0;
  for (BlockView b; r->next(b, lost) == NextStatus::ok;) read += r->done(b) ? 1 : 0;
  CHECK(read == 4);
  CHECK(r->row().blocks_lost.load() == 0);
}

TEST_CASE("a channel that drops at the source never waits for a lossless reader") {
  Fixture f;
  ChannelSpec s = spec("dropper", 64, 4);
  s.full_policy = FullPolicy::drop;
  REQUIRE(create_channel(f.arena, s));
  auto w = ChannelWriter::open(f.arena, "dropper");
  auto r = ChannelReader::open(f.arena, "dropper", ConsumerPolicy::lossless, "ll", StartAt::oldest);
  REQUIRE(w);
  REQUIRE(r);
  for (int i = 0; i < 4; ++i) write_block(*w, 64);
  std::span<std::byte> out;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 10; ++i) CHECK(w->claim(out) == ClaimStatus::dropped);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(50));
  CHECK(list_channels(f.arena)[0].dropped_at_source == 10);
}

TEST_CASE("a latest consumer sees only the newest block") {
  Fixture f;
  REQUIRE(create_channel(f.arena, spec("scope", 64, 8)));
  auto w = ChannelWriter::open(f.arena, "scope");
  auto r = ChannelReader::open(f.arena, "scope", ConsumerPolicy::latest, "scope");
  REQUIRE(w);
  REQUIRE(r);
  for (int i = 0; i < 20; ++i) write_block(*w, 64);
  BlockView b;
  std::uint64_t lost = 0;
  REQUIRE(r->next(b, lost) == NextStatus::ok);
  CHECK(b.sequence == 19);
  CHECK(r->done(b));
  CHECK(r->next(b, lost) == NextStatus::empty);
  CHECK(r->row().blocks_lost.load() == 0);
}

TEST_CASE("a second writer on a channel is refused while the first lives") {
  Fixture f;
  REQUIRE(create_channel(f.arena, spec("one")));
  auto w = ChannelWriter::open(f.arena, "one");
  REQUIRE(w);
  auto w2 = ChannelWriter::open(f.arena, "one");
  REQUIRE_FALSE(w2);
  CHECK(w2.error().what.find("already has a writer") != std::string::npos);
}

TEST_CASE("the pyramid keeps every peak, whatever the span drawn") {
  Fixture f;
  REQUIRE(create_channel(f.arena, spec("peaks", 1000, 16)));
  auto w = ChannelWriter::open(f.arena, "peaks");
  REQUIRE(w);
  constexpr std::uint64_t kBlocks = 10;
  std::vector<float> all;
  for (std::uint64_t blk = 0; blk < kBlocks; ++blk) {
    std::span<std::byte> out;
    REQUIRE(w->claim(out) == ClaimStatus::ok);
    std::vector<float> v(1000, 0.0F);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<float>(all.size() + i) * 0.01F);
    if (blk == 3) v[517] = 42.0F;   // one-sample spike
    if (blk == 7) v[2] = -17.0F;
    all.insert(all.end(), v.begin(), v.end());
    std::memcpy(out.data(), v.data(), v.size() * sizeof(float));
    w->publish(1000);
  }
  for (const std::size_t columns : {std::size_t{10}, std::size_t{100}, std::size_t{37}}) {
    CAPTURE(columns);
    std::vector<float> mins(columns), maxs(columns);
    const std::uint64_t complete = all.size() / 4096 * 4096;  // whole top-level entries only
    envelope(f.arena, 0, 0, complete, mins, maxs);
    float hi = -1e9F, lo = 1e9F;
    for (std::size_t c = 0; c < columns; ++c) {
      if (!std::isnan(maxs[c])) hi = std::max(hi, maxs[c]);
      if (!std::isnan(mins[c])) lo = std::min(lo, mins[c]);
    }
    CHECK(hi == 42.0F);
    CHECK(lo == -17.0F);
  }
}

TEST_CASE("bad channel specs are refused with the channel's name and the reason") {
  Fixture f(1ULL << 20, 2);
  SUBCASE("unknown dtype") { CHECK_FALSE(parse_dtype("f16")); }
  SUBCASE("unknown policy") { CHECK_FALSE(parse_policy("sometimes")); }
  SUBCASE("rates of zero, below zero or NaN") {
    for (const double rate : {0.0, -5.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
      ChannelSpec s = spec("bad");
      s.rate_hz = rate;
      auto r = create_channel(f.arena, s);
      REQUIRE_FALSE(r);
      CHECK(r.error().what.find("channel 'bad'") != std::string::npos);
      CHECK(r.error().what.find("rate") != std::string::npos);
    }
  }
  SUBCASE("a ring that is not a power of two") {
    auto r = create_channel(f.arena, spec("odd", 64, 6));
    REQUIRE_FALSE(r);
    CHECK(r.error().what.find("power of two") != std::string::npos);
  }
  SUBCASE("a block that does not fit the arena's channel room") {
    auto r = create_channel(f.arena, spec("huge", 1U << 20, 8));
    REQUIRE_FALSE(r);
    CHECK(r.error().what.find("but the arena's channel pool has ") != std::string::npos);
    CHECK(r.error().what.find(" bytes free; create the arena with a bigger pool (weir create --pool MIB") != std::string::npos);
  }
  SUBCASE("a duplicate name and a full table") {
    REQUIRE(create_channel(f.arena, spec("a", 64, 4)));
    auto dup = create_channel(f.arena, spec("a", 64, 4));
    REQUIRE_FALSE(dup);
    CHECK(dup.error().what.find("already exists") != std::string::npos);
    REQUIRE(create_channel(f.arena, spec("b", 64, 4)));
    auto full = create_channel(f.arena, spec("c", 64, 4));
    REQUIRE_FALSE(full);
    CHECK(full.error().what.find("table is full") != std::string::npos);
  }
}

TEST_CASE("publishing pulses the channel's group and its labels' groups") {
  Fixture f;
  ChannelSpec s = spec("adc3");
  s.labels = {"adc"};
  REQUIRE(create_channel(f.arena, s));
  auto by_label = Watcher::create(f.arena);
  auto by_name = Watcher::create(f.arena);
  REQUIRE(by_label);
  REQUIRE(by_name);
  REQUIRE(by_label->subscribe_label("adc"));
  REQUIRE(by_name->subscribe_channel("adc3"));
  auto w = ChannelWriter::open(f.arena, "adc3");
  REQUIRE(w);
  write_block(*w, 16);
  CHECK(by_label->wait(1'000'000'000) == WaitStatus::pulsed);
  CHECK(by_name->wait(1'000'000'000) == WaitStatus::pulsed);
  std::vector<Change> changes;
  CHECK(by_name->drain([&](const Change& c) { changes.push_back(c); }) == 0);
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].channel);
  CHECK(changes[0].slot == 0);
  CHECK(changes[0].generation == 0);
}

}  // TEST_SUITE

TEST_SUITE("core.channel") {

TEST_CASE("each block carries the index of its first sample, even after short blocks") {
  Fixture f;
  REQUIRE(create_channel(f.arena, spec("idx", 100, 8)));
  auto w = ChannelWriter::open(f.arena, "idx");
  auto r = ChannelReader::open(f.arena, "idx", ConsumerPolicy::lossy, "t", StartAt::oldest);
  REQUIRE(w);
  REQUIRE(r);
  for (const std::uint32_t n : {100U, 30U, 100U}) {
    std::span<std::byte> out;
    REQUIRE(w->claim(out) == ClaimStatus::ok);
    w->publish(n);
  }
  std::vector<std::uint64_t> firsts;
  BlockView b;
  std::uint64_t lost = 0;
  while (r->next(b, lost) == NextStatus::ok) {
    firsts.push_back(b.first_sample);
    CHECK(r->done(b));
  }
  CHECK(firsts == std::vector<std::uint64_t>{0, 100, 130});
}

TEST_CASE("a frame-shaped channel keeps its frames and axis, read back by list and by descriptor") {
  Fixture f;
  ChannelSpec s = spec("det0.psd", 2049, 4);
  s.frame.frames_per_block = 1;
  s.frame.frame_elements = 2049;
  s.frame.axis = FrameAxis{"frequency", "Hz", 0.0, 30.5, ""};
  auto index = create_channel(f.arena, s);
  REQUIRE(index);
  ChannelSpec mca = spec("det0.hist", 512, 4);
  mca.frame.frames_per_block = 2;
  mca.frame.frame_elements = 256;
  mca.frame.axis = FrameAxis{"energy", "keV", -1.25, 0.5, "det0.energy_axis"};
  REQUIRE(create_channel(f.arena, mca));
  REQUIRE(create_channel(f.arena, spec("plain", 64, 4)));
  int seen = 0;
  for (const ChannelInfo& c : list_channels(f.arena)) {
    ++seen;
    if (c.name == "det0.psd") {
      CHECK(c.frame == s.frame);
      CHECK(c.frame.framed());
    } else if (c.name == "det0.hist") {
      CHECK(c.frame == mca.frame);
    } else {
      CHECK_FALSE(c.frame.framed());
      CHECK(c.frame == FrameShape{});
    }
  }
  CHECK(seen == 3);
  const auto* desc = reinterpret_cast<const ChannelDesc*>(f.arena.region(Region::channels) +
                                                          std::uint64_t{*index} * sizeof(ChannelDesc));
  CHECK(frame_shape(*desc) == s.frame);
  CHECK(desc->frames_per_block == 1);
  CHECK(desc->frame_elements == 2049);
  CHECK(std::string(desc->axis_name) == "frequency");
}

TEST_CASE("a frame shape that does not fit its block or fields is refused by name") {
  Fixture f;
  ChannelSpec s = spec("framed", 256, 4);
  s.frame.frames_per_block = 2;
  s.frame.frame_elements = 128;
  s.frame.axis.name = "time";
  std::string expect;
  SUBCASE("frames times elements is not the block") {
    s.frame.frame_elements = 100;
    expect = "frame shape 2 x 100 does not fill a block of 256 samples";
  }
  SUBCASE("elements without frames") {
    s.frame.frames_per_block = 0;
    expect = "frame shape 0 x 128";
  }
  SUBCASE("frames without elements") {
    s.frame.frame_elements = 0;
    expect = "frame shape 2 x 0";
  }
  SUBCASE("an axis name too long") {
    s.frame.axis.name = std::string(32, 'n');
    expect = "axis name";
  }
  SUBCASE("axis units too long") {
    s.frame.axis.units = std::string(40, 'u');
    expect = "axis units";
  }
  SUBCASE("a values key too long") {
    s.frame.axis.values_key = std::string(64, 'k');
    expect = "values key";
  }
  SUBCASE("a NaN start") {
    s.frame.axis.start = std::numeric_limits<double>::quiet_NaN();
    expect = "finite";
  }
  SUBCASE("an infinite step") {
    s.frame.axis.step = std::numeric_limits<double>::infinity();
    expect = "finite";
  }
  auto r = create_channel(f.arena, s);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::invalid_argument);
  CHECK_MESSAGE(r.error().what.find("channel 'framed'") != std::string::npos, r.error().what);
  CHECK_MESSAGE(r.error().what.find(expect) != std::string::npos, r.error().what);
  CHECK_FALSE(find_channel(f.arena, "framed"));
}

}  // TEST_SUITE

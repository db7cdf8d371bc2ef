#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "arena_guard.hpp"
#include "weir/core/block_copier.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/view_copy.hpp"

using namespace weir::core;
using weir::test::ArenaGuard;
using weir::test::unique_name;

namespace {

constexpr std::uint32_t kBlock = 64;  // samples per block
constexpr std::uint32_t kRing = 8;    // blocks in the ring

struct Fixture {
  Fixture() : guard(unique_name("blockcopy")), arena(std::move(Arena::create(guard.where(), options()).value())) {
    ChannelSpec s;
    s.name = "adc";
    s.dtype = Dtype::f32;
    s.rate_hz = 1e6;
    s.samples_per_block = kBlock;
    s.ring_blocks = kRing;
    index = create_channel(arena, s).value();
  }
  static ArenaOptions options() {
    ArenaOptions o;
    o.slot_count = 64;
    o.value_bytes = 64;
    o.vector_dim = 0;
    o.channel_capacity = 2;
    o.channel_data_bytes = 1ULL << 20;
    return o;
  }
  ArenaGuard guard;
  Arena arena;
  std::uint32_t index = 0;
};

// Block seq holds samples seq*1000 + i; its first n samples are published, stamped 100 + seq.
void write_block(ChannelWriter& w, std::uint32_t n = kBlock) {
  std::span<std::byte> out;
  REQUIRE(w.claim(out) == ClaimStatus::ok);
  std::vector<float> v(n);
  for (std::uint32_t i = 0; i < n; ++i) v[i] = static_cast<float>(w.next_sequence() * 1000 + i);
  std::memcpy(out.data(), v.data(), n * sizeof(float));
  w.publish(n, 100 + w.next_sequence(), 200 + w.next_sequence(), 7);
}

float sample(const std::vector<std::byte>& buffer, std::uint64_t offset_bytes, std::uint32_t i) {
  float f = 0;
  std::memcpy(&f, buffer.data() + offset_bytes + i * sizeof(float), sizeof(f));
  return f;
}

}  // namespace

TEST_SUITE("core.block_copier") {

TEST_CASE("a range copy reports overwritten and unwritten blocks exactly and copies the rest with their metadata") {
  Fixture f;
  auto w = ChannelWriter::open(f.arena, "adc");
  REQUIRE(w);
  for (int i = 0; i < 12; ++i) write_block(*w);  // blocks 0..11: the ring keeps 4..11 ...
  std::span<std::byte> claimed;
  REQUIRE(w->claim(claimed) == ClaimStatus::ok);  // ... until block 12, being written, takes 4's slot
  auto copier = BlockCopier::open(f.arena, f.index);
  REQUIRE(copier);
  CHECK(copier->head() == 12);
  CHECK(copier->block_bytes() == kBlock * sizeof(float));
  std::vector<std::byte> buffer(16 * copier->block_bytes());
  std::vector<BlockRecord> records(16);
  const BlockRange r = copier->copy_range(0, 14, buffer, records);
  CHECK(r.visited == 14);
  CHECK(r.overwritten == 5);
  CHECK(r.unwritten == 2);
  CHECK(r.copied == 7);
  CHECK(r.bytes == 7 * copier->block_bytes());
  for (std::uint64_t s = 0; s < 14; ++s) {
    CAPTURE(s);
    const BlockRecord& rec = records[s];
    CHECK(rec.sequence == s);
    if (s < 5) {
      CHECK(rec.status == BlockStatus::overwritten);
    } else if (s >= 12) {
      CHECK(rec.status == BlockStatus::unwritten);  // 12 is claimed, 13 not yet begun
    } else {
      REQUIRE(rec.status == BlockStatus::ok);
      CHECK(rec.samples == kBlock);
      CHECK(rec.flags == 7);
      CHECK(rec.realtime_ns == 100 + s);
      CHECK(rec.monotonic_ns == 200 + s);
      CHECK(rec.first_sample == s * kBlock);
      CHECK(rec.offset_bytes == (s - 5) * copier->block_bytes());
      CHECK(sample(buffer, rec.offset_bytes, 0) == static_cast<float>(s * 1000));
      CHECK(sample(buffer, rec.offset_bytes, kBlock - 1) == static_cast<float>(s * 1000 + kBlock - 1));
    }
  }
}

TEST_CASE("peek reads a block's metadata alone, validated as a copy is") {
  Fixture f;
  auto w = ChannelWriter::open(f.arena, "adc");
  REQUIRE(w);
  for (int i = 0; i < 12; ++i) write_block(*w);  // the ring keeps 4..11
  auto copier = BlockCopier::open(f.arena, f.index);
  REQUIRE(copier);
  BlockRecord rec;
  CHECK(copier->peek(3, rec) == BlockStatus::overwritten);
  CHECK(copier->peek(12, rec) == BlockStatus::unwritten);
  REQUIRE(copier->peek(11, rec) == BlockStatus::ok);
  std::vector<std::byte> buffer(copier->block_bytes());
  BlockRecord copied;
  REQUIRE(copier->copy(11, buffer, copied) == BlockStatus::ok);
  CHECK(rec.sequence == 11);
  CHECK(rec.samples == copied.samples);
  CHECK(rec.first_sample == copied.first_sample);
  CHECK(rec.realtime_ns == copied.realtime_ns);
  CHECK(rec.monotonic_ns == copied.monotonic_ns);
  CHECK(rec.flags == 7);
}

TEST_CASE("a range copy stops where the destination or the records run out") {
  Fixture f;
  auto w = ChannelWriter::open(f.arena, "adc");
  REQUIRE(w);
  for (int i = 0; i < 6; ++i) write_block(*w, kBlock / 2);  // half blocks: a full block's room is still needed
  auto copier = BlockCopier::open(f.arena, "adc");
  REQUIRE(copier);
  std::vector<BlockRecord> records(8);
  SUBCASE("destination") {
    std::vector<std::byte> buffer(3 * copier->block_bytes() - 1);
    const BlockRange r = copier->copy_range(0, 6, buffer, records);
    CHECK(r.visited == 4);  // 0, 1, 2 and 3 are half a block each: a fifth would not be sure to fit
    CHECK(r.copied == 4);
    CHECK(r.bytes == 4 * copier->block_bytes() / 2);
  }
  SUBCASE("records") {
    std::vector<std::byte> buffer(8 * copier->block_bytes());
    const BlockRange r = copier->copy_range(1, 6, buffer, std::span(records).first(2));
    CHECK(r.visited == 2);
    CHECK(records[1].sequence == 2);
  }
}

TEST_CASE("a single block copy validates against the state word") {
  Fixture f;
  auto w = ChannelWriter::open(f.arena, "adc");
  REQUIRE(w);
  write_block(*w);
  auto copier = BlockCopier::open(f.arena, f.index);
  REQUIRE(copier);
  std::vector<std::byte> buffer(copier->block_bytes());
  BlockRecord rec;
  CHECK(copier->copy(0, buffer, rec) == BlockStatus::ok);
  CHECK(rec.samples == kBlock);
  CHECK(copier->copy(1, buffer, rec) == BlockStatus::unwritten);
  std::vector<std::byte> small(copier->block_bytes() - 1);
  CHECK(copier->copy(0, small, rec) == BlockStatus::too_small);
}

TEST_CASE("opening a copier names a missing channel") {
  Fixture f;
  CHECK_FALSE(BlockCopier::open(f.arena, 1));
  CHECK_FALSE(BlockCopier::open(f.arena, 99));
  auto missing = BlockCopier::open(f.arena, "nope");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == Errc::not_found);
}

TEST_CASE("a reader's view is copied then validated, and a reused slot is caught") {
  Fixture f;
  auto w = ChannelWriter::open(f.arena, "adc");
  REQUIRE(w);
  auto reader = ChannelReader::open(f.arena, "adc", ConsumerPolicy::lossy, "test", StartAt::oldest);
  REQUIRE(reader);
  write_block(*w);
  BlockView view;
  std::uint64_t lost = 0;
  REQUIRE(reader->next(view, lost) == NextStatus::ok);
  std::vector<std::byte> copy(std::size_t{view.samples} * sizeof(float));
  CHECK(copy_validated(view, copy));
  CHECK(sample(copy, 0, 1) == 1.0F);
  for (std::uint32_t i = 0; i < kRing; ++i) write_block(*w);  // laps the slot
  CHECK_FALSE(copy_validated(view, copy));
}

}  // TEST_SUITE

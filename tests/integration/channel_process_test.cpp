// Channels across real processes: a lossless follower, a lossless reader killed with SIGKILL,
// a writer killed mid-block, and exact loss accounting under overload.
#include <doctest/doctest.h>

#include <csignal>
#include <cstring>
#include <vector>

#include "proc_util.hpp"
#include "weir/core/channel.hpp"

using namespace weir::core;
using namespace weir::test;

namespace {

constexpr milliseconds kReportTimeout{20'000};

ArenaOptions channel_arena() {
  return ArenaOptions{
      .slot_count = 64, .value_bytes = 64, .channel_capacity = 4, .channel_data_bytes = 8ULL << 20, .vector_dim = 0};
}

ChannelSpec spec(const std::string& name, std::uint32_t block, std::uint32_t ring, std::int64_t wait_ns) {
  ChannelSpec s;
  s.name = name;
  s.dtype = Dtype::u32;
  s.rate_hz = 1e6;
  s.samples_per_block = block;
  s.ring_blocks = ring;
  s.wait_timeout_ns = wait_ns;
  return s;
}

// Sample i of block seq is seq * 65536 + i: a reader can check every sample it gets.
void fill(std::span<std::byte> out, std::uint64_t seq, std::uint32_t n) {
  for (std::uint32_t i = 0; i < n; ++i) {
    const auto v = static_cast<std::uint32_t>(seq * 65536 + i);
    std::memcpy(out.data() + std::size_t{i} * 4, &v, 4);
  }
}

bool intact(const BlockView& b) {
  for (std::uint32_t i = 0; i < b.samples; ++i) {
    std::uint32_t v;
    std::memcpy(&v, b.data + std::size_t{i} * 4, 4);
    if (v != static_cast<std::uint32_t>(b.sequence * 65536 + i)) return false;
  }
  return true;
}

// Reads until `total` sequence numbers are accounted for or the deadline passes.
// report: [0] read, [1] lost, [2] bad samples, [3] out-of-order.
int follow(const Arena& arena, const std::string& channel, ConsumerPolicy policy, std::uint64_t total,
           ChildLink& link, std::uint32_t slow_every = 0) {
  auto reader = ChannelReader::open(arena, channel, policy, "follower", StartAt::sequence, 0);
  if (!reader) return 1;
  link.ready();
  std::uint64_t expect = 0, n = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(15);
  while (link.report[0] + link.report[1] < total && Clock::now() < deadline) {
    BlockView b;
    std::uint64_t lost = 0;
    const NextStatus st = reader->next(b, lost);
    if (st == NextStatus::empty) {
      std::this_thread::yield();
      continue;
    }
    if (st == NextStatus::lost) {
      link.report[1] += lost;
      expect += lost;
      continue;
    }
    if (b.sequence != expect) ++link.report[3];
    if (slow_every != 0 && ++n % slow_every == 0) std::this_thread::sleep_for(std::chrono::microseconds(300));
    const bool ok = intact(b);
    if (reader->done(b)) {
      ++link.report[0];
      if (!ok) ++link.report[2];
    } else {
      ++link.report[1];
    }
    expect = b.sequence + 1;
  }
  return 0;
}

}  // namespace

TEST_SUITE("integration.channel") {

TEST_CASE("a lossless reader in another process gets every block, intact and in order") {
  ArenaGuard guard(unique_name("ch-follow"));
  auto arena = Arena::create(guard.where(), channel_arena());
  REQUIRE(arena);
  REQUIRE(create_channel(*arena, spec("adc0", 1024, 8, 5'000'000'000)));
  constexpr std::uint64_t kBlocks = 5000;
  Child reader = Child::spawn([&](ChildLink& link) { return follow(*arena, "adc0", ConsumerPolicy::lossless, kBlocks, link); });
  REQUIRE(reader.wait_ready(kReportTimeout));
  auto writer = ChannelWriter::open(*arena, "adc0");
  REQUIRE(writer);
  std::uint64_t dropped = 0;
  for (std::uint64_t seq = 0; seq < kBlocks; ++seq) {
    std::span<std::byte> out;
    if (writer->claim(out) != ClaimStatus::ok) {
      ++dropped;
      continue;
    }
    fill(out, writer->next_sequence(), 1024);
    writer->publish(1024);
  }
  Report r{};
  REQUIRE(reader.read_report(r, kReportTimeout));
  CHECK(reader.wait().code == 0);
  MESSAGE("read " << r[0] << ", lost " << r[1] << ", writer waits " << list_channels(*arena)[0].writer_waits);
  CHECK(dropped == 0);
  CHECK(r[0] == kBlocks);
  CHECK(r[1] == 0);
  CHECK(r[2] == 0);
  CHECK(r[3] == 0);
}

TEST_CASE("under overload a lossy reader's lost plus read equals written, exactly") {
  ArenaGuard guard(unique_name("ch-overload"));
  auto arena = Arena::create(guard.where(), channel_arena());
  REQUIRE(arena);
  REQUIRE(create_channel(*arena, spec("fast", 256, 16, 0)));
  constexpr std::uint64_t kBlocks = 20000;
  Child reader = Child::spawn([&](ChildLink& link) {
    return follow(*arena, "fast", ConsumerPolicy::lossy, kBlocks, link, 8);  // slowed on purpose
  });
  REQUIRE(reader.wait_ready(kReportTimeout));
  auto writer = ChannelWriter::open(*arena, "fast");
  REQUIRE(writer);
  for (std::uint64_t seq = 0; seq < kBlocks; ++seq) {
    std::span<std::byte> out;
    REQUIRE(writer->claim(out) == ClaimStatus::ok);
    fill(out, writer->next_sequence(), 256);
    writer->publish(256);
  }
  Report r{};
  REQUIRE(reader.read_report(r, kReportTimeout));
  CHECK(reader.wait().code == 0);
  MESSAGE("written " << kBlocks << ", read " << r[0] << ", lost " << r[1]);
  CHECK(r[1] > 0);
  CHECK(r[0] + r[1] == kBlocks);
  CHECK(r[2] == 0);  // nothing torn was ever passed as read
  const auto info = list_channels(*arena)[0];
  CHECK(info.blocks_written == kBlocks);
}

TEST_CASE("a lossless reader killed with SIGKILL holds the writer no longer than its timeout") {
  ArenaGuard guard(unique_name("ch-kill-reader"));
  auto arena = Arena::create(guard.where(), channel_arena());
  REQUIRE(arena);
  REQUIRE(create_channel(*arena, spec("ll", 64, 4, 200'000'000)));
  Child reader = Child::spawn([&](ChildLink& link) {
    auto r = ChannelReader::open(*arena, "ll", ConsumerPolicy::lossless, "doomed", StartAt::sequence, 0);
    if (!r) return 1;
    link.ready();
    for (;;) pause();  // never reads
  });
  REQUIRE(reader.wait_ready(kReportTimeout));
  auto writer = ChannelWriter::open(*arena, "ll");
  REQUIRE(writer);
  for (int i = 0; i < 4; ++i) {
    std::span<std::byte> out;
    REQUIRE(writer->claim(out) == ClaimStatus::ok);
    writer->publish(64);
  }
  REQUIRE(reader.kill_now().signal == SIGKILL);
  const auto t0 = Clock::now();
  std::span<std::byte> out;
  CHECK(writer->claim(out) == ClaimStatus::ok);  // the dead reader is reaped, not waited for
  writer->publish(64);
  CHECK(Clock::now() - t0 < milliseconds(200));
  const auto info = list_channels(*arena)[0];
  CHECK(info.consumers.empty());
  CHECK(info.dropped_at_source == 0);
}

TEST_CASE("a writer killed mid-block leaves no torn block to readers, and a new writer takes over") {
  ArenaGuard guard(unique_name("ch-kill-writer"));
  auto arena = Arena::create(guard.where(), channel_arena());
  REQUIRE(arena);
  REQUIRE(create_channel(*arena, spec("w", 4096, 8, 0)));
  auto reader = ChannelReader::open(*arena, "w", ConsumerPolicy::lossy, "watcher", StartAt::sequence, 0);
  REQUIRE(reader);
  Child writer = Child::spawn([&](ChildLink& link) {
    auto w = ChannelWriter::open(*arena, "w");
    if (!w) return 1;
    for (std::uint64_t seq = 0; seq < 3; ++seq) {
      std::span<std::byte> out;
      if (w->claim(out) != ClaimStatus::ok) return 2;
      fill(out, seq, 4096);
      w->publish(4096);
    }
    std::span<std::byte> out;
    if (w->claim(out) != ClaimStatus::ok) return 2;
    fill(out, 3, 100);  // half a block, then death
    link.ready();
    for (;;) pause();
  });
  REQUIRE(writer.wait_ready(kReportTimeout));
  REQUIRE(writer.kill_now().signal == SIGKILL);
  std::uint64_t read = 0;
  for (;;) {
    BlockView b;
    std::uint64_t lost = 0;
    const NextStatus st = reader->next(b, lost);
    if (st != NextStatus::ok) break;
    CHECK(intact(b));
    CHECK(reader->done(b));
    ++read;
  }
  CHECK(read == 3);  // block 3 was never committed: not handed out
  auto next_writer = ChannelWriter::open(*arena, "w");
  REQUIRE(next_writer);  // the dead writer's claim is taken over
  CHECK(next_writer->next_sequence() == 3);
  std::span<std::byte> out;
  REQUIRE(next_writer->claim(out) == ClaimStatus::ok);
  fill(out, 3, 4096);
  next_writer->publish(4096);
  BlockView b;
  std::uint64_t lost = 0;
  REQUIRE(reader->next(b, lost) == NextStatus::ok);
  CHECK(b.sequence == 3);
  CHECK(intact(b));
}

}  // TEST_SUITE

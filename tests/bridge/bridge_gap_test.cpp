// Gap blocks across the bridge: blocks the near writer published as gaps (ChannelWriter::skip with
// a reason) are gap blocks of the same reason on the far side, runs of two reasons side by side and
// one longer than the ring included; real send and recv processes over loopback.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "bridge_harness.hpp"

namespace weir::test {

namespace {

using core::GapReason;

// A run read back: data blocks, or lost blocks of one reason.
struct Run {
  bool lost = false;
  std::uint64_t blocks = 0;
  GapReason reason = GapReason::lapped;
  bool operator==(const Run&) const = default;
};

std::string describe(const std::vector<Run>& runs) {
  std::string out;
  for (const Run& r : runs)
    out += (r.lost ? std::string(core::gap_reason_name(r.reason)) : std::string("data")) + " " +
           std::to_string(r.blocks) + "; ";
  return out;
}

void publish(core::ChannelWriter& w, std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) {
    std::span<std::byte> slot;
    REQUIRE(w.claim(slot) == core::ClaimStatus::ok);
    w.publish(w.samples_per_block());
  }
}

}  // namespace

TEST_SUITE("bridge.gaps") {

TEST_CASE("the near writer's gap blocks reach the far side as gap blocks of their reasons" * doctest::timeout(120)) {
  ArenaGuard near_name(unique_name("bnear")), far_name(unique_name("bfar"));
  core::Arena near = make_arena(near_name.where());
  core::Arena far = make_arena(far_name.where());
  make_channel(near, "adc0", 64, 64);
  const int port = free_port();
  const std::string to = "tcp://127.0.0.1:" + std::to_string(port);
  BackgroundWeir recv({"bridge", "recv", far_name.where(), "--name", "in", "--bind", to, "--plain"});
  BackgroundWeir send({"bridge", "send", near_name.where(), "--name", "out", "--channels", "adc0", "--to", to,
                       "--plain", "--lossless"});
  REQUIRE_MESSAGE(eventually([&] { return key_u64(near, "bridge.out.channels") == 1 &&
                                          key_text(near, "bridge.out.link") == "up"; },
                             kSettle),
                  send.output());
  std::optional<core::ChannelReader> reader;  // the far channel appears with its description
  REQUIRE_MESSAGE(eventually([&] {
                    auto r = core::ChannelReader::open(far, "adc0", core::ConsumerPolicy::lossless, "far-test",
                                                       core::StartAt::sequence, 0);
                    if (r) reader.emplace(std::move(*r));
                    return reader.has_value();
                  },
                                     kSettle),
                  recv.output());

  auto writer = core::ChannelWriter::open(near, "adc0");
  REQUIRE(writer);
  publish(*writer, 10);
  writer->skip(5, GapReason::kernel_drop);
  writer->skip(3, GapReason::late);
  publish(*writer, 10);
  writer->skip(200, GapReason::timeout);  // longer than the ring: the sender meets it in pieces
  publish(*writer, 5);
  constexpr std::uint64_t kTotal = 233;
  REQUIRE(writer->next_sequence() == kTotal);

  std::vector<Run> runs;
  std::uint64_t seen = 0;
  const auto deadline = std::chrono::steady_clock::now() + kSettle;
  while (seen < kTotal && std::chrono::steady_clock::now() < deadline) {
    core::BlockView view;
    std::uint64_t lost = 0;
    const core::NextStatus st = reader->next(view, lost);
    if (st == core::NextStatus::empty) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    Run r{st == core::NextStatus::lost, st == core::NextStatus::lost ? lost : 1,
          st == core::NextStatus::lost ? core::lost_reason(view.flags) : GapReason::lapped};
    if (!r.lost) REQUIRE(reader->done(view));
    seen += r.blocks;
    if (!runs.empty() && runs.back().lost == r.lost && runs.back().reason == r.reason) {
      runs.back().blocks += r.blocks;
    } else {
      runs.push_back(r);
    }
  }
  const std::vector<Run> expected{{false, 10}, {true, 5, GapReason::kernel_drop}, {true, 3, GapReason::late},
                                  {false, 10}, {true, 200, GapReason::timeout},   {false, 5}};
  CHECK_MESSAGE(runs == expected, describe(runs) << "\n" << recv.output());
  CHECK(eventually([&] { return key_u64(far, "bridge.in.gaps") == 208; }, kSettle));
  send.signal(SIGTERM);
  recv.signal(SIGTERM);
  CHECK(send.wait_exit(kSettle) == kExitOk);
  CHECK(recv.wait_exit(kSettle) == kExitOk);
}

TEST_CASE("blocks waiting together go in few messages, every one delivered in order" * doctest::timeout(120)) {
  ArenaGuard near_name(unique_name("bnear")), far_name(unique_name("bfar"));
  core::Arena near = make_arena(near_name.where());
  core::Arena far = make_arena(far_name.where());
  make_channel(near, "adc0", 256, 512);
  constexpr std::uint64_t kBlocks = 500;  // there before the sender starts: it finds them all waiting
  {
    auto writer = core::ChannelWriter::open(near, "adc0");
    REQUIRE(writer);
    for (std::uint64_t i = 0; i < kBlocks; ++i) {
      std::span<std::byte> slot;
      REQUIRE(writer->claim(slot) == core::ClaimStatus::ok);
      const auto* stamp = reinterpret_cast<const std::byte*>(&i);
      for (std::size_t off = 0; off + sizeof i <= slot.size(); off += sizeof i) std::memcpy(slot.data() + off, stamp, sizeof i);
      writer->publish(writer->samples_per_block());
    }
  }
  const std::string to = "tcp://127.0.0.1:" + std::to_string(free_port());
  BackgroundWeir recv({"bridge", "recv", far_name.where(), "--name", "in", "--bind", to, "--plain"});
  BackgroundWeir send({"bridge", "send", near_name.where(), "--name", "out", "--channels", "adc0", "--to", to,
                       "--plain", "--lossless"});
  REQUIRE_MESSAGE(eventually([&] { return key_u64(near, "bridge.out.sent") == kBlocks; }, kSettle),
                  send.output() << recv.output());
  REQUIRE(eventually([&] { return key_u64(far, "bridge.in.received") == kBlocks; }, kSettle));
  // 1 KiB f32 blocks: a full message (64 KiB of records) holds 55 of them; the sender ends a message
  // after 64 blocks of one channel, so others get their turn.
  const std::uint64_t messages = key_u64(near, "bridge.out.messages");
  CHECK(messages * 55 >= kBlocks);
  CHECK(messages <= kBlocks / 4);
  CHECK(key_u64(near, "bridge.out.dropped") == 0);
  CHECK(key_u64(far, "bridge.in.gaps") == 0);
  core::BlockRecord rec;
  auto copier = core::BlockCopier::open(far, "adc0");
  REQUIRE(copier);
  std::vector<std::byte> block(copier->block_bytes());
  for (std::uint64_t s = 0; s < kBlocks; ++s) {
    REQUIRE(copier->copy(s, block, rec) == core::BlockStatus::ok);
    std::uint64_t first = 0, last = 0;
    std::memcpy(&first, block.data(), sizeof first);
    std::memcpy(&last, block.data() + block.size() - sizeof last, sizeof last);
    CHECK_MESSAGE((first == s && last == s && rec.samples == 256), "far block " << s);
  }
  send.signal(SIGTERM);
  recv.signal(SIGTERM);
  CHECK(send.wait_exit(kSettle) == kExitOk);
  CHECK(recv.wait_exit(kSettle) == kExitOk);
}

}  // TEST_SUITE

}  // namespace weir::test

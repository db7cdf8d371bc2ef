// Broker trouble through the mock cluster. Lossless (the default), acks=all, idempotent: the
// partition's leader taken down while `weir sim` writes and brought back loses nothing and
// duplicates nothing, block for block. Lossy under a stalled cluster (every broker down): each block
// the producer's queue could not take is a sink_overflow gap block on the far side, exactly as many
// as the sender counted dropped, and the rest arrive.
#include <doctest/doctest.h>

#include <string>

#include "kafka_harness.hpp"

namespace weir::test {

TEST_SUITE("kafka.outage") {

TEST_CASE("the leader down mid-run and back: 0 lost, 0 duplicated, samples identical" * doctest::timeout(60)) {
  const std::string topic = "weir.outage";
  kafka::MockCluster cluster = make_cluster(topic);
  ArenaGuard near_name(unique_name("knear")), far_name(unique_name("kfar"));
  core::Arena near = make_arena(near_name.where());
  core::Arena far = make_arena(far_name.where());
  constexpr std::uint64_t kBlocks = 600;  // 3 s at 200 blocks/s
  make_channel(near, "adc0", 1000, 1024, 2e5);
  BackgroundWeir send({"kafka", "send", near_name.where(), "--brokers", cluster.bootstraps(), "--topic", topic,
                       "--name", "out", "--channel", "adc0"});
  BackgroundWeir recv({"kafka", "recv", far_name.where(), "--brokers", cluster.bootstraps(), "--topic", topic,
                       "--name", "in", "--channel", "adc0", "--ring", "1024"});
  REQUIRE_MESSAGE(eventually([&] { return key_u64(near, "kafka.out.channels") == 1; }, kSettle), send.output());
  BackgroundWeir sim({"sim", near_name.where(), "adc0", "--rate", "2e5", "--block", "1000", "--blocks",
                      std::to_string(kBlocks), "--signal", "noise", "--seed", "11"});
  REQUIRE(eventually([&] { return key_u64(far, "kafka.in.received") >= 50; }, kSettle));
  REQUIRE(cluster.set_down(1));  // the partition's leader
  const std::uint64_t at_down = key_u64(far, "kafka.in.received");
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const std::uint64_t during = key_u64(far, "kafka.in.received");
  REQUIRE(cluster.set_up(1));
  CHECK(sim.wait_exit(kSettle) == kExitOk);
  REQUIRE_MESSAGE(eventually([&] { return head_of(far, "adc0") == kBlocks; }, kSettle), recv.output() << send.output());
  CHECK(eventually([&] { return key_u64(near, "kafka.out.delivered") == kBlocks; }, kSettle));
  // The outage was real: the far side stalled while the leader was down (a few already fetched may land).
  CHECK_MESSAGE(during < at_down + 100, "received " << at_down << " at the outage, " << during << " after 1.5 s");
  check_identical(near, far, "adc0", kBlocks);
  CHECK(eventually([&] { return key_u64(far, "kafka.in.received") == kBlocks; }, kSettle));
  CHECK(key_u64(far, "kafka.in.gaps") == 0);
  CHECK(key_u64(far, "kafka.in.late") == 0);  // no duplicate reached the channel
  CHECK(key_u64(near, "kafka.out.sent") == kBlocks);
  CHECK(key_u64(near, "kafka.out.failed") == 0);
  CHECK(key_u64(near, "kafka.out.dropped") == 0);
  send.signal(SIGTERM);
  recv.signal(SIGTERM);
  CHECK(send.wait_exit(kSettle) == kExitOk);
  CHECK(recv.wait_exit(kSettle) == kExitOk);
}

TEST_CASE("lossy under a stalled cluster: every dropped block is a sink_overflow gap block" * doctest::timeout(60)) {
  const std::string topic = "weir.lossy";
  kafka::MockCluster cluster = make_cluster(topic);
  ArenaGuard near_name(unique_name("knear")), far_name(unique_name("kfar"));
  core::Arena near = make_arena(near_name.where());
  core::Arena far = make_arena(far_name.where());
  make_channel(near, "adc0", 256, 1024);
  BackgroundWeir send({"kafka", "send", near_name.where(), "--brokers", cluster.bootstraps(), "--topic", topic,
                       "--name", "out", "--lossy", "--queue", "50", "-X", "reconnect.backoff.max.ms=500",
                       "--gap-carrier-ms", "600000"});  // the drops ride on the next block, not a carrier
  BackgroundWeir recv({"kafka", "recv", far_name.where(), "--brokers", cluster.bootstraps(), "--topic", topic,
                       "--name", "in", "--channel", "adc0", "--ring", "1024"});
  REQUIRE_MESSAGE(eventually([&] { return key_u64(near, "kafka.out.channels") == 1; }, kSettle), send.output());
  auto writer = core::ChannelWriter::open(near, "adc0");
  REQUIRE(writer);
  publish_paced(near, *writer, "out", 100, send);
  REQUIRE(key_u64(near, "kafka.out.dropped") == 0);
  for (int b = 1; b <= 3; ++b) REQUIRE(cluster.set_down(b));
  publish_numbered(*writer, 300);  // the queue takes 50; the rest cannot go
  REQUIRE(eventually([&] { return key_u64(near, "kafka.out.sent") + key_u64(near, "kafka.out.dropped") == 400; }, kSettle));
  const std::uint64_t dropped = key_u64(near, "kafka.out.dropped");
  CHECK(dropped >= 200);
  for (int b = 1; b <= 3; ++b) REQUIRE(cluster.set_up(b));
  // What the queue held goes out once the brokers are back.
  REQUIRE_MESSAGE(eventually([&] { return key_u64(near, "kafka.out.delivered") == key_u64(near, "kafka.out.sent"); },
                             kSettle),
                  send.output());
  publish_paced(near, *writer, "out", 100, send);  // its first message carries the last run of drops
  CHECK(key_u64(near, "kafka.out.dropped") == dropped);  // none after the cluster came back
  constexpr std::uint64_t kTotal = 500;
  REQUIRE_MESSAGE(eventually([&] { return head_of(far, "adc0") == kTotal; }, kSettle), recv.output() << send.output());
  CHECK(eventually([&] { return key_u64(near, "kafka.out.delivered") == kTotal - dropped; }, kSettle));
  CHECK(key_u64(near, "kafka.out.dropped") == dropped);
  const ReadBack r = read_back(far, "adc0", kTotal);
  CHECK(r.data == kTotal - dropped);
  CHECK(r.lost[static_cast<std::size_t>(core::GapReason::sink_overflow)] == dropped);
  CHECK(r.total() == kTotal);
  CHECK(eventually([&] { return key_u64(far, "kafka.in.gaps") == dropped; }, kSettle));
  CHECK(key_u64(far, "kafka.in.late") == 0);
  // What arrived is the near side's blocks at their own sequences: each carries its sequence.
  auto copier = core::BlockCopier::open(far, "adc0");
  REQUIRE(copier);
  std::vector<std::byte> block(copier->block_bytes());
  std::uint64_t misplaced = 0;
  for (std::uint64_t s = 0; s < kTotal; ++s) {
    core::BlockRecord rec;
    if (copier->copy(s, block, rec) != core::BlockStatus::ok || (rec.flags & core::kBlockGapFlag) != 0) continue;
    std::uint64_t seq = 0;
    std::memcpy(&seq, block.data(), sizeof seq);
    misplaced += seq != s ? 1 : 0;
  }
  CHECK(misplaced == 0);
  send.signal(SIGTERM);
  recv.signal(SIGTERM);
  CHECK(send.wait_exit(kSettle) == kExitOk);
  CHECK(recv.wait_exit(kSettle) == kExitOk);
}

}  // TEST_SUITE

}  // namespace weir::test

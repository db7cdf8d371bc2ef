// arena -> Kafka -> arena through a 3-broker mock cluster (replication 3): a real `weir sim` writes,
// `weir kafka send` produces se00, `weir kafka recv` publishes into a second arena. Every block
// arrives once with identical samples and times; keys go as f144; `weir kafka mock` serves clients.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "kafka_harness.hpp"

namespace weir::test {

TEST_SUITE("kafka.cli") {

TEST_CASE("every block arrives once, bit-identical, through 3 brokers with replication 3" * doctest::timeout(60)) {
  const std::string topic = "weir.adc";
  kafka::MockCluster cluster = make_cluster(topic);
  ArenaGuard near_name(unique_name("knear")), far_name(unique_name("kfar"));
  core::Arena near = make_arena(near_name.where());
  core::Arena far = make_arena(far_name.where());
  constexpr std::uint64_t kBlocks = 400;
  make_channel(near, "adc0", 1024, 512);
  BackgroundWeir send({"kafka", "send", near_name.where(), "--brokers", cluster.bootstraps(), "--topic", topic,
                       "--name", "out", "--channel", "adc*"});
  BackgroundWeir recv({"kafka", "recv", far_name.where(), "--brokers", cluster.bootstraps(), "--topic", topic,
                       "--name", "in", "--channel", "adc0", "--ring", "512", "--units", "V"});
  REQUIRE_MESSAGE(eventually([&] { return key_u64(near, "kafka.out.channels") == 1; }, kSettle), send.output());
  const RunResult sim = run_weir({"sim", near_name.where(), "adc0", "--rate", "1e6", "--block", "1024", "--blocks",
                                  std::to_string(kBlocks), "--fast", "--signal", "noise", "--seed", "3"});
  REQUIRE_MESSAGE(sim.exit_code == kExitOk, sim.err);
  REQUIRE(head_of(near, "adc0") == kBlocks);
  REQUIRE_MESSAGE(eventually([&] { return head_of(far, "adc0") == kBlocks; }, kSettle), recv.output() << send.output());
  CHECK(eventually([&] { return key_u64(near, "kafka.out.delivered") == kBlocks; }, kSettle));
  check_identical(near, far, "adc0", kBlocks);
  CHECK(eventually([&] { return key_u64(far, "kafka.in.received") == kBlocks; }, kSettle));  // keys every 100 ms
  CHECK(key_u64(far, "kafka.in.gaps") == 0);
  CHECK(key_u64(far, "kafka.in.late") == 0);
  CHECK(key_u64(near, "kafka.out.dropped") == 0);
  CHECK(key_u64(near, "kafka.out.failed") == 0);
  auto info = core::list_channels(far);
  REQUIRE(info.size() == 1);
  CHECK(info[0].rate_hz == 1e6);
  CHECK(info[0].samples_per_block == 1024);
  send.signal(SIGTERM);
  recv.signal(SIGTERM);
  CHECK(send.wait_exit(kSettle) == kExitOk);
  CHECK(recv.wait_exit(kSettle) == kExitOk);
  CHECK_MESSAGE(send.output().find("400 messages sent, 400 delivered, 0 failed, 0 dropped") != std::string::npos,
                send.output());
}

TEST_CASE("keys go as f144 and other sources on the topic are counted, not taken" * doctest::timeout(60)) {
  const std::string topic = "weir.mixed";
  kafka::MockCluster cluster = make_cluster(topic);
  ArenaGuard near_name(unique_name("knear")), far_name(unique_name("kfar"));
  core::Arena near = make_arena(near_name.where());
  core::Arena far = make_arena(far_name.where());
  make_channel(near, "adc0", 256, 64, 1e5);
  make_channel(near, "adc1", 256, 64, 1e5);
  core::KvStore kv(near);
  REQUIRE(kv.set_f64("stage.temp", 21.5) == core::KvStatus::ok);
  REQUIRE(kv.set_text("stage.name", "left") == core::KvStatus::ok);  // f144 has no text: skipped, counted
  BackgroundWeir send({"kafka", "send", near_name.where(), "--brokers", cluster.bootstraps(), "--topic", topic,
                       "--name", "out", "--keys", "stage.*"});
  BackgroundWeir recv({"kafka", "recv", far_name.where(), "--brokers", cluster.bootstraps(), "--topic", topic,
                       "--name", "in", "--channel", "adc1"});
  REQUIRE_MESSAGE(eventually([&] { return key_u64(near, "kafka.out.channels") == 2; }, kSettle), send.output());
  const RunResult sim = run_weir({"sim", near_name.where(), "adc0", "adc1", "--rate", "1e5", "--block", "256",
                                  "--blocks", "20", "--fast"});
  REQUIRE_MESSAGE(sim.exit_code == kExitOk, sim.err);
  REQUIRE_MESSAGE(eventually([&] { return key_u64(far, "kafka.in.received") == 20; }, kSettle), recv.output());
  // 20 blocks of adc0 and the f144 of stage.temp are on the topic too: counted as other.
  CHECK(eventually([&] { return key_u64(far, "kafka.in.other") == 21; }, kSettle));
  CHECK(key_u64(near, "kafka.out.keys_sent") == 1);
  CHECK(key_u64(near, "kafka.out.keys_skipped") == 1);
  CHECK(key_u64(far, "kafka.in.gaps") == 0);
  REQUIRE(kv.set_f64("stage.temp", 22.0) == core::KvStatus::ok);  // a change goes again
  CHECK(eventually([&] { return key_u64(near, "kafka.out.keys_sent") == 2; }, kSettle));
  send.signal(SIGTERM);
  recv.signal(SIGTERM);
  CHECK(send.wait_exit(kSettle) == kExitOk);
  CHECK(recv.wait_exit(kSettle) == kExitOk);
}

TEST_CASE("weir kafka mock prints a bootstrap address clients can use, and stops on SIGTERM" * doctest::timeout(60)) {
  BackgroundWeir mock({"kafka", "mock", "--brokers", "3", "--topic", "demo"});
  std::string bootstrap;
  REQUIRE_MESSAGE(eventually([&] {
                    const std::string out = mock.output();
                    const std::size_t nl = out.find('\n');
                    if (nl == std::string::npos || out.find("127.0.0.1:") != 0) return false;
                    bootstrap = out.substr(0, nl);
                    return true;
                  },
                             kSettle),
                  mock.output());
  CHECK(std::count(bootstrap.begin(), bootstrap.end(), ',') == 2);
  ArenaGuard near_name(unique_name("knear")), far_name(unique_name("kfar"));
  core::Arena near = make_arena(near_name.where());
  core::Arena far = make_arena(far_name.where());
  make_channel(near, "adc0", 128, 64, 1e5);
  const RunResult sim = run_weir({"sim", near_name.where(), "adc0", "--rate", "1e5", "--block", "128", "--blocks", "10", "--fast"});
  REQUIRE(sim.exit_code == kExitOk);
  BackgroundWeir send({"kafka", "send", near_name.where(), "--brokers", bootstrap, "--topic", "demo", "--name", "out"});
  BackgroundWeir recv({"kafka", "recv", far_name.where(), "--brokers", bootstrap, "--topic", "demo", "--name", "in",
                       "--channel", "adc0"});
  REQUIRE_MESSAGE(eventually([&] { return head_of(far, "adc0") == 10; }, kSettle), recv.output() << send.output());
  check_identical(near, far, "adc0", 10);
  send.signal(SIGTERM);
  recv.signal(SIGTERM);
  CHECK(send.wait_exit(kSettle) == kExitOk);
  CHECK(recv.wait_exit(kSettle) == kExitOk);
  mock.signal(SIGTERM);
  CHECK(mock.wait_exit(kSettle) == kExitOk);
}

TEST_CASE("a librdkafka property passes through, and a bad one fails at start naming it" * doctest::timeout(60)) {
  ArenaGuard near_name(unique_name("knear"));
  core::Arena near = make_arena(near_name.where());
  const RunResult bad = run_weir({"kafka", "send", near_name.where(), "--brokers", "127.0.0.1:1", "--topic", "t",
                                  "--name", "out", "-X", "no.such.property=1"});
  CHECK(bad.exit_code != kExitOk);
  CHECK_MESSAGE(bad.err.find("no.such.property") != std::string::npos, bad.err);
  const RunResult shape = run_weir({"kafka", "recv", near_name.where(), "--brokers", "127.0.0.1:1", "--topic", "t",
                                    "--channel", "c", "-X", "fetch.wait.max.ms"});
  CHECK(shape.exit_code != kExitOk);
  CHECK_MESSAGE(shape.err.find("KEY=VALUE") != std::string::npos, shape.err);
}

}  // TEST_SUITE

}  // namespace weir::test

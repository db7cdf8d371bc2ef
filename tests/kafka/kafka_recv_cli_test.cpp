// `weir kafka recv` as a real process against `weir kafka send` and `weir sim` through a 3-broker mock
// cluster (replication 3): several sources from one consumer (SOURCE=CHANNEL routes and every source
// into a channel of its own), f144 values into typed keys, and a receiver killed with SIGKILL
// mid-stream and restarted, which continues its channel exactly from the group's committed offset.
#include <doctest/doctest.h>

#include <array>
#include <bit>
#include <optional>
#include <span>
#include <string>

#include "json.hpp"
#include "kafka_harness.hpp"

namespace weir::test {

namespace {

/// The --json report a receiver printed at its stop (the last line that is one JSON object).
nlohmann::json recv_report(const std::string& output) {
  std::size_t end = output.size();
  while (end > 0) {
    const std::size_t begin = output.rfind('\n', end - 1);
    const std::size_t from = begin == std::string::npos ? 0 : begin + 1;
    nlohmann::json j = parse_json(std::string_view(output).substr(from, end - from));
    if (!j.is_discarded() && j.is_object()) return j;
    if (begin == std::string::npos) break;
    end = begin;
  }
  FAIL("no JSON report in: " << output);
  return {};
}

}  // namespace

TEST_SUITE("kafka.recv") {

TEST_CASE("one consumer takes several sources into their channels and f144 values into typed keys" *
          doctest::timeout(60)) {
  const std::string topic = "weir.routes";
  kafka::MockCluster cluster = make_cluster(topic);
  ArenaGuard near_name(unique_name("knear")), far_name(unique_name("kfar")), all_name(unique_name("kall"));
  core::Arena near = make_arena(near_name.where());
  core::Arena far = make_arena(far_name.where());
  core::Arena all = make_arena(all_name.where());
  for (const char* c : {"adc0", "adc1", "adc2"}) make_channel(near, c, 256, 64, 1e5);
  core::KvStore kv(near);
  REQUIRE(kv.set_i64("stage.i", -7) == core::KvStatus::ok);
  REQUIRE(kv.set_u64("stage.u", 1ULL << 40) == core::KvStatus::ok);
  REQUIRE(kv.set_f64("stage.f", 21.5) == core::KvStatus::ok);
  const std::array<double, 3> arr{1.5, 2.5, 3.5};
  core::ArrayShape shape;
  shape.elem = core::Dtype::f64;
  shape.rank = 1;
  shape.dims = {3, 0};
  REQUIRE(kv.set_array("stage.arr", shape, std::as_bytes(std::span(arr))) == core::KvStatus::ok);
  REQUIRE(kv.set_f64("other.x", 1.0) == core::KvStatus::ok);  // sent, matched by no --keys glob: other
  BackgroundWeir send({"kafka", "send", near_name.where(), "--brokers", cluster.bootstraps(), "--topic", topic,
                       "--name", "out", "--keys", "stage.*", "other.*"});
  BackgroundWeir recv({"kafka", "recv", far_name.where(), "--brokers", cluster.bootstraps(), "--topic", topic,
                       "--name", "in", "--channel", "adc0", "--channel", "adc1=b1", "--keys", "stage.[iuf]",
                       "--keys", "stage.arr", "--json"});
  BackgroundWeir every({"kafka", "recv", all_name.where(), "--brokers", cluster.bootstraps(), "--topic", topic,
                        "--name", "all", "--all-sources", "--json"});
  REQUIRE_MESSAGE(eventually([&] { return key_u64(near, "kafka.out.channels") == 3; }, kSettle), send.output());
  const RunResult sim = run_weir({"sim", near_name.where(), "adc0", "adc1", "adc2", "--rate", "1e5", "--block", "256",
                                  "--blocks", "20", "--fast", "--signal", "noise", "--seed", "5"});
  REQUIRE_MESSAGE(sim.exit_code == kExitOk, sim.err);
  REQUIRE_MESSAGE(eventually([&] { return head_of(far, "adc0") == 20 && head_of(far, "b1") == 20; }, kSettle),
                  recv.output());
  REQUIRE_MESSAGE(eventually([&] { return key_u64(far, "kafka.in.keys_array") == 1; }, kSettle), recv.output());
  REQUIRE_MESSAGE(eventually([&] {
                    return head_of(all, "adc0") == 20 && head_of(all, "adc1") == 20 && head_of(all, "adc2") == 20;
                  },
                             kSettle),
                  every.output());
  check_identical(near, far, "adc0", 20);
  check_identical(near, far, "adc1", "b1", 20);
  for (const char* c : {"adc0", "adc1", "adc2"}) check_identical(near, all, c, 20);
  CHECK(core::list_channels(far).size() == 2);  // adc2 is no route of "in"
  core::KvStore got(far);
  std::uint64_t bits = 0;
  core::ValueType type{};
  REQUIRE(got.get_scalar("stage.i", bits, type) == core::KvStatus::ok);
  CHECK(type == core::ValueType::i64);
  CHECK(static_cast<std::int64_t>(bits) == -7);
  REQUIRE(got.get_scalar("stage.u", bits, type) == core::KvStatus::ok);
  CHECK(type == core::ValueType::u64);
  CHECK(bits == 1ULL << 40);
  REQUIRE(got.get_scalar("stage.f", bits, type) == core::KvStatus::ok);
  CHECK(type == core::ValueType::f64);
  CHECK(std::bit_cast<double>(bits) == 21.5);
  std::array<double, 3> back{};
  core::ValueInfo info;
  REQUIRE(got.get("stage.arr", std::as_writable_bytes(std::span(back)), info) == core::KvStatus::ok);
  CHECK(info.type == core::ValueType::array);
  CHECK(info.array == shape);
  CHECK(back == arr);
  CHECK(got.get_scalar("other.x", bits, type) == core::KvStatus::not_found);
  send.signal(SIGTERM);
  recv.signal(SIGTERM);
  every.signal(SIGTERM);
  CHECK(send.wait_exit(kSettle) == kExitOk);
  REQUIRE(recv.wait_exit(kSettle) == kExitOk);
  REQUIRE(every.wait_exit(kSettle) == kExitOk);
  const nlohmann::json r = recv_report(recv.output());
  CHECK(r["received"] == 40);
  CHECK(r["gaps"] == 0);
  CHECK(r["late"] == 0);
  CHECK(r["other"] == 21);  // adc2's 20 blocks and other.x
  CHECK(r["keys_i64"] == 1);
  CHECK(r["keys_u64"] == 1);
  CHECK(r["keys_f64"] == 1);
  CHECK(r["keys_array"] == 1);
  CHECK(r["keys_failed"] == 0);
  REQUIRE(r["sources"].size() == 2);
  CHECK(r["sources"][1]["name"] == "adc1");
  CHECK(r["sources"][1]["channel"] == "b1");
  CHECK(r["sources"][1]["received"] == 20);
  const nlohmann::json a = recv_report(every.output());
  CHECK(a["received"] == 60);
  CHECK(a["sources"].size() == 3);
  CHECK(a["other"] == 5);  // the five f144 messages: no --keys
  CHECK(a["gaps"] == 0);
}

TEST_CASE("a receiver killed with SIGKILL mid-stream and restarted continues its channel exactly" *
          doctest::timeout(90)) {
  const std::string topic = "weir.resume";
  kafka::MockCluster cluster = make_cluster(topic);
  ArenaGuard near_name(unique_name("knear")), far_name(unique_name("kfar"));
  core::Arena near = make_arena(near_name.where());
  core::Arena far = make_arena(far_name.where());
  constexpr std::uint64_t kBlocks = 800;  // 4 s at 200 blocks/s
  make_channel(near, "adc0", 500, 1024, 1e5);
  BackgroundWeir send({"kafka", "send", near_name.where(), "--brokers", cluster.bootstraps(), "--topic", topic,
                       "--name", "out", "--channel", "adc0"});
  const std::vector<std::string> recv_args{"kafka", "recv", far_name.where(), "--brokers", cluster.bootstraps(),
                                           "--topic", topic, "--name", "in", "--channel", "adc0", "--ring", "1024",
                                           "--commit-ms", "300", "--json"};
  std::optional<BackgroundWeir> recv(std::in_place, recv_args);
  REQUIRE_MESSAGE(eventually([&] { return key_u64(near, "kafka.out.channels") == 1; }, kSettle), send.output());
  BackgroundWeir sim({"sim", near_name.where(), "adc0", "--rate", "1e5", "--block", "500", "--blocks",
                      std::to_string(kBlocks), "--signal", "noise", "--seed", "17"});
  REQUIRE(eventually([&] { return key_u64(far, "kafka.in.received") >= 200 && key_u64(far, "kafka.in.commits") >= 1; },
                     kSettle));
  const ExitStatus killed = recv->kill_and_reap();
  CHECK(killed.signal == SIGKILL);
  const std::uint64_t at_kill = head_of(far, "adc0");
  CHECK(at_kill < kBlocks);  // it died mid-stream
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the stream goes on without it
  recv.emplace(recv_args);
  CHECK(sim.wait_exit(kSettle) == kExitOk);
  REQUIRE_MESSAGE(eventually([&] { return head_of(far, "adc0") == kBlocks; }, kSettle), recv->output());
  CHECK(eventually([&] { return key_u64(near, "kafka.out.delivered") == kBlocks; }, kSettle));
  check_identical(near, far, "adc0", kBlocks);
  CHECK(head_of(far, "adc0") == kBlocks);
  recv->signal(SIGTERM);
  REQUIRE(recv->wait_exit(kSettle) == kExitOk);
  const nlohmann::json r = recv_report(recv->output());
  const auto committed = r["partition_offsets"][0]["committed_at_start"].get<std::int64_t>();
  CHECK(committed > 0);
  CHECK(committed <= static_cast<std::int64_t>(at_kill));  // committed only what was published
  CHECK(r["partition_offsets"][0]["first"] == committed);
  CHECK(r["partition_offsets"][0]["next"] == kBlocks);
  CHECK(r["received"] == kBlocks - at_kill);
  CHECK(r["late"] == at_kill - static_cast<std::uint64_t>(committed));  // re-read after the last commit, dropped
  CHECK(r["gaps"] == 0);
  CHECK(r["offset_gaps"] == 0);
  CHECK(r["sources"][0]["resumed"] == true);
  CHECK(r["lag"] == 0);
  send.signal(SIGTERM);
  CHECK(send.wait_exit(kSettle) == kExitOk);
  CHECK(key_u64(near, "kafka.out.sent") == kBlocks);
  CHECK(key_u64(near, "kafka.out.dropped") == 0);
}

}  // TEST_SUITE

}  // namespace weir::test

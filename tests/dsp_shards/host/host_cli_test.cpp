// `weir shard` across processes: the simulator (`weir sim`) writes a channel, the host runs in its
// own process, and the test checks outputs and counters in the arena.
#include <doctest/doctest.h>

#include <signal.h>

#include <string>
#include <vector>

#include "host_test_util.hpp"
#include "live_arena.hpp"

namespace {

using namespace weir;
using test::contains;
using test::Process;

constexpr std::uint32_t kBlock = 256;
const std::string kBlockText = "256";
const std::string kRateText = "25600";  // 100 blocks per second when paced
constexpr double kRate = 25600;

bool consumer_registered(const core::Arena& arena, const std::string& channel, const std::string& name) {
  return test::wait_until([&] {
    const auto c = test::consumer_info(arena, channel, name);
    return c.has_value() && c->alive && !c->kind.empty();
  });
}

}  // namespace

TEST_SUITE("shard_host.cli") {

TEST_CASE("a lossless copy host republishes every simulated block and keeps its counters in the arena") {
  test::ScratchArena scratch("shardcli");
  const core::Arena& arena = scratch.arena();
  test::make_channel(arena, "adc0", core::Dtype::f32, kBlock, kRate);
  auto host = Process::weir({"shard", scratch.name(), "copy", "--input", "adc0", "--policy", "lossless"});
  REQUIRE(consumer_registered(arena, "adc0", "copy.adc0"));
  const auto sim = test::run_weir_once({"sim", scratch.name(), "adc0", "--rate", kRateText, "--block", kBlockText,
                                        "--blocks", "40", "--fast", "--signal", "noise", "--seed", "7"});
  REQUIRE(sim.status.exited);
  REQUIRE(sim.status.code == test::kExitOk);
  REQUIRE(test::wait_until([&] { return test::consumer_info(arena, "adc0", "copy.adc0")->blocks_read == 40; }));

  const auto row = test::consumer_info(arena, "adc0", "copy.adc0");
  REQUIRE(row);
  CHECK(row->pid == static_cast<std::uint32_t>(host->pid()));
  CHECK(row->kind == "shard:copy");
  CHECK(row->policy == core::ConsumerPolicy::lossless);
  CHECK(row->blocks_lost == 0);
  CHECK(row->blocks_out == 40);
  CHECK(row->errors == 0);
  CHECK(row->proc_p50_ns > 0);
  CHECK(row->proc_p99_ns >= row->proc_p50_ns);
  CHECK(test::channel_info(arena, "adc0")->dropped_at_source == 0);
  const auto ls = test::run_weir_once({"ls", scratch.name()});
  CHECK(contains(ls.out, "shard:copy"));
  CHECK(contains(ls.out, "copy.adc0"));

  const auto in = test::ring_blocks(arena, "adc0");
  const auto out = test::ring_blocks(arena, "adc0.copy");
  REQUIRE(in.size() == 40);
  REQUIRE(out.size() == 40);
  for (std::size_t i = 0; i < in.size(); ++i) {
    CHECK(out[i].bytes == in[i].bytes);
    CHECK(out[i].realtime_ns == in[i].realtime_ns);
  }

  host->signal(SIGTERM);
  const auto status = host->wait();
  CHECK(status.exited);
  CHECK(status.code == test::kExitOk);
  const std::string text = host->out();
  CHECK(contains(text, "instance 'copy.adc0' reads 'adc0' (lossless) -> adc0.copy"));
  CHECK(contains(text, "stopped by a signal"));
  CHECK(contains(text, "copy.adc0: blocks in 40, out 40, lost 0, skipped 0, errors 0"));
  CHECK_FALSE(test::consumer_info(arena, "adc0", "copy.adc0"));  // a clean stop leaves the table
  CHECK(test::channel_info(arena, "adc0.copy")->writer_pid == 0);
}

TEST_CASE("SIGTERM stops a host reading a paced simulator within a wait slice, with a JSON summary") {
  test::ScratchArena scratch("shardcli");
  const core::Arena& arena = scratch.arena();
  auto sim = Process::weir({"sim", scratch.name(), "adc0", "--rate", kRateText, "--block", kBlockText,
                            "--duration", "20"});
  REQUIRE(test::wait_until([&] { return test::channel_info(arena, "adc0").has_value(); }));
  auto host = Process::weir({"shard", scratch.name(), "null", "--input", "adc0", "--json"});
  REQUIRE(consumer_registered(arena, "adc0", "null.adc0"));
  REQUIRE(test::wait_until([&] { return test::consumer_info(arena, "adc0", "null.adc0")->blocks_read >= 5; }));
  const auto asked = test::Clock::now();
  host->signal(SIGTERM);
  const auto status = host->wait();
  const auto took = test::Clock::now() - asked;
  CHECK(status.exited);
  CHECK(status.code == test::kExitOk);
  CHECK(took < std::chrono::milliseconds(1000));
  const std::string json = host->out();
  CHECK(json.front() == '{');
  CHECK(contains(json, "\"stopped\":true"));
  CHECK(contains(json, "\"instance\":\"null.adc0\""));
  CHECK(contains(json, "\"blocks_lost\":0"));
  CHECK(sim->running());  // the host's stop does not touch the writer
  sim->signal(SIGTERM);
  CHECK(sim->wait().code == test::kExitOk);
}

TEST_CASE("a label runs one instance per matching channel, all in one host process") {
  test::ScratchArena scratch("shardcli");
  const core::Arena& arena = scratch.arena();
  test::make_channel(arena, "det0", core::Dtype::f32, kBlock, kRate, 64, {"adc"});
  test::make_channel(arena, "det1", core::Dtype::f32, kBlock, kRate, 64, {"adc", "fast"});
  test::make_channel(arena, "mon0", core::Dtype::f32, kBlock, kRate, 64, {"slow"});
  auto host = Process::weir({"shard", scratch.name(), "copy", "--input", "adc", "--instance", "tee"});
  REQUIRE(consumer_registered(arena, "det0", "tee.det0"));
  REQUIRE(consumer_registered(arena, "det1", "tee.det1"));
  CHECK(test::consumer_info(arena, "det0", "tee.det0")->pid == static_cast<std::uint32_t>(host->pid()));
  CHECK(test::consumer_info(arena, "det1", "tee.det1")->pid == static_cast<std::uint32_t>(host->pid()));
  CHECK(test::channel_info(arena, "mon0")->consumers.empty());

  const auto sim = test::run_weir_once({"sim", scratch.name(), "det0", "det1", "--rate", kRateText, "--block",
                                        kBlockText, "--blocks", "10", "--fast"});
  REQUIRE(sim.status.code == test::kExitOk);
  REQUIRE(test::wait_until([&] {
    return test::consumer_info(arena, "det0", "tee.det0")->blocks_read +
               test::consumer_info(arena, "det0", "tee.det0")->blocks_lost == 10 &&
           test::consumer_info(arena, "det1", "tee.det1")->blocks_read +
               test::consumer_info(arena, "det1", "tee.det1")->blocks_lost == 10;
  }));
  CHECK(test::channel_info(arena, "det0.copy").has_value());
  CHECK(test::channel_info(arena, "det1.copy").has_value());
  host->signal(SIGINT);
  CHECK(host->wait().code == test::kExitOk);
  const std::string text = host->out();
  CHECK(contains(text, "label 'adc' matches 2 channels: det0, det1; one instance each, in this process"));
  CHECK(contains(text, "tee.det0: blocks in "));
  CHECK(contains(text, "tee.det1: blocks in "));
}

TEST_CASE("--duration ends the host on its own; an unmatched input and --output with a label are refused") {
  test::ScratchArena scratch("shardcli");
  const core::Arena& arena = scratch.arena();
  test::make_channel(arena, "det0", core::Dtype::f32, kBlock, kRate, 64, {"adc"});
  test::make_channel(arena, "det1", core::Dtype::f32, kBlock, kRate, 64, {"adc"});
  const auto timed = test::run_weir_once({"shard", scratch.name(), "null", "--input", "det0", "--duration", "0.3"});
  CHECK(timed.status.code == test::kExitOk);
  CHECK(contains(timed.out, "shard null reached its duration after 0.3"));

  const auto none = test::run_weir_once({"shard", scratch.name(), "null", "--input", "nothing"});
  CHECK(none.status.code == test::kExitError);
  CHECK(contains(none.err, "no channel named or labelled 'nothing'"));
  CHECK(contains(none.err, "(channels: det0, det1)"));

  const auto both = test::run_weir_once({"shard", scratch.name(), "copy", "--input", "adc", "--output", "x"});
  CHECK(both.status.code == test::kExitError);
  CHECK(contains(both.err, "label 'adc' matches 2 channels; leave out --output"));
}

TEST_CASE("--list, describe and --describe show the kinds and a shard's parameters") {
  const auto list = test::run_weir_once({"shard", "--list"});
  CHECK(list.status.code == test::kExitOk);
  CHECK(contains(list.out, "null"));
  CHECK(contains(list.out, "copy"));

  const auto copy = test::run_weir_once({"shard", "describe", "copy"});
  CHECK(copy.status.code == test::kExitOk);
  CHECK(contains(copy.out, "shard 'copy' (built-in)"));
  CHECK(contains(copy.out, "suffix"));
  CHECK(contains(copy.out, "'copy'"));

  const auto faulty = test::run_weir_once({"shard", "--describe", test::test_shard("faulty")});
  CHECK(faulty.status.code == test::kExitOk);
  CHECK(contains(faulty.out, "input dtypes: f32"));
  CHECK(contains(faulty.out, "(required)"));
  CHECK(contains(faulty.out, "[1, 1000000000]"));
  CHECK(contains(faulty.out, "none|segv|hang|fail|skip|bigkey|lap"));

  const auto json = test::run_weir_once({"shard", "describe", "copy", "--json"});
  CHECK(contains(json.out, "\"kind\":\"copy\""));
  CHECK(contains(json.out, "\"name\":\"suffix\""));

  const auto unknown = test::run_weir_once({"shard", "describe", "fttf"});
  CHECK(unknown.status.code == test::kExitError);
  CHECK(contains(unknown.err, "unknown shard kind 'fttf'"));
}

TEST_CASE("usage mistakes exit 2 with a message") {
  CHECK(test::run_weir_once({"shard", "arena-x", "null"}).status.code == test::kExitUsage);  // no --input
  CHECK(test::run_weir_once({"shard"}).status.code == test::kExitUsage);
  const auto bad = test::run_weir_once({"shard", "arena-x", "null", "--input", "a", "--param", "gain"});
  CHECK(bad.status.code == test::kExitUsage);
  CHECK(contains(bad.err, "--param 'gain': expected name=value"));
  CHECK(test::run_weir_once({"shard", "arena-x", "null", "--input", "a", "--policy", "eager"}).status.code ==
        test::kExitUsage);
}

}  // TEST_SUITE

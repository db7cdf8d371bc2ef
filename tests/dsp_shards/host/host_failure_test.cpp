// Failure isolation across processes: a shard that crashes or hangs takes only its host process
// down, the acquisition writer goes on, and the arena shows the host's consumer dead. Refusals
// through the CLI exit 1 with a message naming the shard.
#include <doctest/doctest.h>

#include <signal.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "host_test_util.hpp"
#include "live_arena.hpp"
#include "weir/core/kv_store.hpp"

namespace {

using namespace weir;
using test::contains;
using test::Process;

const std::string kRateText = "25600";  // with 256-sample blocks: 100 blocks per second
const std::string kBlockText = "256";

// The sanitizers turn a SIGSEGV into a report and an exit code; these tests want the signal itself.
// Their other options (suppressions) are kept.
std::vector<std::string> raw_signals() {
  std::vector<std::string> env;
  for (const char* name : {"ASAN_OPTIONS", "TSAN_OPTIONS"}) {
    const char* old = std::getenv(name);
    env.push_back(std::string(name) + "=" + (old != nullptr ? std::string(old) + ":" : "") + "handle_segv=0");
  }
  return env;
}

std::unique_ptr<Process> paced_sim(const test::ScratchArena& scratch, const std::string& dtype = "f32") {
  auto sim = Process::weir({"sim", scratch.name(), "adc0", "--rate", kRateText, "--block", kBlockText, "--duration",
                            "30", "--dtype", dtype});
  REQUIRE(test::wait_until([&] { return test::channel_info(scratch.arena(), "adc0").has_value(); }));
  return sim;
}

// The consumer is gone from the table, or listed as dead.
bool consumer_dead_or_gone(const core::Arena& arena, const std::string& channel, const std::string& name) {
  const auto c = test::consumer_info(arena, channel, name);
  return !c.has_value() || !c->alive;
}

}  // namespace

TEST_SUITE("shard_host.failure") {

TEST_CASE("a shard that segfaults on its 5th block kills only its host; the writer keeps writing") {
  test::ScratchArena scratch("shardfail");
  const core::Arena& arena = scratch.arena();
  auto sim = paced_sim(scratch);
  auto host = Process::weir({"shard", scratch.name(), test::test_shard("faulty"), "--input", "adc0", "--param",
                             "mode=segv", "--param", "at=5", "--instance", "crashy"},
                            raw_signals());
  const auto status = host->wait();
  CHECK(status.signal == SIGSEGV);
  CHECK_FALSE(status.timed_out);

  core::KvStore kv(arena);
  std::uint64_t seen = 0;
  core::ValueType type = core::ValueType::none;
  REQUIRE(kv.get_scalar("adc0.seen", seen, type) == core::KvStatus::ok);
  CHECK(seen == 5);  // it wrote its key for blocks 1..5, then crashed in the 5th

  const std::uint64_t before = test::channel_info(arena, "adc0")->blocks_written;
  CHECK(test::wait_until([&] { return test::channel_info(arena, "adc0")->blocks_written >= before + 10; }));
  CHECK(sim->running());
  CHECK(consumer_dead_or_gone(arena, "adc0", "crashy"));
  const auto ls = test::run_weir_once({"ls", scratch.name()});
  CHECK(ls.status.code == test::kExitOk);
  if (contains(ls.out, "crashy")) CHECK(contains(ls.out, "(dead)"));

  // A restarted host takes over the row table and the key.
  auto again = Process::weir({"shard", scratch.name(), test::test_shard("faulty"), "--input", "adc0", "--param",
                              "at=1000", "--instance", "crashy"});
  CHECK(test::wait_until([&] {
    const auto c = test::consumer_info(arena, "adc0", "crashy");
    return c.has_value() && c->alive && c->blocks_read > 0;
  }));
  again->signal(SIGTERM);
  CHECK(again->wait().code == test::kExitOk);
  sim->signal(SIGTERM);
  CHECK(sim->wait().code == test::kExitOk);
}

TEST_CASE("a shard that hangs is aborted by the watchdog, which names the shard and the block") {
  test::ScratchArena scratch("shardfail");
  const core::Arena& arena = scratch.arena();
  auto sim = paced_sim(scratch);
  auto host = Process::weir({"shard", scratch.name(), test::test_shard("faulty"), "--input", "adc0", "--param",
                             "mode=hang", "--param", "at=3", "--watchdog", "0.5"},
                            raw_signals());
  REQUIRE(test::wait_until([&] {
    const auto c = test::consumer_info(arena, "adc0", "faulty.adc0");
    return c.has_value() && c->blocks_read >= 2;
  }));
  const auto hung_at = test::Clock::now();  // the 3rd block is at most 10 ms away: process() is stuck from here
  const auto status = host->wait(std::chrono::seconds(10));
  const auto took = test::Clock::now() - hung_at;
  CHECK(status.signal == SIGABRT);
  CHECK_FALSE(status.timed_out);
  CHECK(took >= std::chrono::milliseconds(400));
  CHECK(took < std::chrono::milliseconds(3000));
  const auto row = test::consumer_info(arena, "adc0", "faulty.adc0");
  REQUIRE(row);  // its pid is dead now; nobody has reaped it yet
  CHECK_FALSE(row->alive);
  const std::string err = host->err();
  CHECK(contains(err, "watchdog"));
  CHECK(contains(err, "libweir_test_shard_faulty.so"));
  CHECK(contains(err, "instance 'faulty.adc0'"));
  CHECK(contains(err, "on block " + std::to_string(row->cursor) + " of channel 'adc0'"));  // the block it never finished
  CHECK(sim->running());
  sim->signal(SIGTERM);
  CHECK(sim->wait().code == test::kExitOk);
}

TEST_CASE("the host refuses broken shards and bad configurations with exit code 1, naming the shard") {
  test::ScratchArena scratch("shardfail");
  const core::Arena& arena = scratch.arena();
  test::make_channel(arena, "adc0", core::Dtype::f32, 256, 25600);
  test::make_channel(arena, "raw", core::Dtype::i16, 256, 25600);
  const auto refuse = [&](std::vector<std::string> args, const std::vector<std::string>& parts) {
    args.insert(args.begin(), {"shard", scratch.name()});
    const auto r = test::run_weir_once(args);
    CHECK(r.status.code == test::kExitError);
    for (const std::string& part : parts) CHECK_MESSAGE(contains(r.err, part), r.err);
  };
  refuse({test::test_shard("abi"), "--input", "adc0"}, {"libweir_test_shard_abi.so", "version 99", "versions 2 to 3"});
  refuse({test::test_shard("abi1"), "--input", "adc0"},
         {"libweir_test_shard_abi1.so", "built for shard ABI version 1, but this host speaks versions 2 to 3",
          "frame shapes and array keys", "rebuild it"});
  refuse({test::test_shard("no_entry"), "--input", "adc0"}, {"no entry symbol 'weir_shard_entry'"});
  refuse({test::test_shard("null_process"), "--input", "adc0"}, {"process is NULL"});
  refuse({"/no/such/shard.so", "--input", "adc0"}, {"shard '/no/such/shard.so': dlopen failed"});
  refuse({test::test_shard("faulty"), "--input", "adc0", "--param", "at=1", "--param", "ratio=7"},
         {"parameter 'ratio': 7 is out of range [0, 1]"});
  refuse({test::test_shard("faulty"), "--input", "adc0", "--param", "at=1", "--param", "mod=segv"},
         {"unknown parameter 'mod': did you mean 'mode'?"});
  refuse({test::test_shard("faulty"), "--input", "adc0", "--param", "at=soon"}, {"'soon' is not a whole number"});
  refuse({test::test_shard("faulty"), "--input", "adc0", "--param", "at=1", "--param", "mode=explode"},
         {"'explode' is not one of none|segv"});
  refuse({test::test_shard("faulty"), "--input", "adc0"}, {"parameter 'at' (int) is required"});
  refuse({test::test_shard("faulty"), "--input", "raw", "--param", "at=1"},
         {"input channel 'raw' carries i16 samples", "accepts f32"});
  refuse({test::test_shard("faulty"), "--input", "adc0", "--param", "at=1", "--param", "mode=bigkey"},
         {"output 'adc0.seen'", "value slots hold 4096"});
  CHECK(test::channel_info(arena, "adc0")->consumers.empty());  // no refusal left a consumer behind
  CHECK(test::channel_info(arena, "raw")->consumers.empty());
}

}  // TEST_SUITE

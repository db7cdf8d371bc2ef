// The third-party example, built as its users would: its own CMake project configured and compiled
// out of tree against the shard header, then loaded by `weir shard` on a live simulated channel.
#include <doctest/doctest.h>

#include <signal.h>
#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "host_test_util.hpp"
#include "live_arena.hpp"
#include "weir/shard_host/loader.hpp"

namespace {

using namespace weir;
using test::contains;
using test::Process;

constexpr auto kBuildTimeout = std::chrono::seconds(150);  // a configure on a busy 2-core machine

// A temporary directory removed however the test ends.
struct TempDir {
  TempDir() {
    char pattern[] = "/tmp/weir-example-XXXXXX";
    REQUIRE(mkdtemp(pattern) != nullptr);
    path = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string path;
};

void run_step(const std::vector<std::string>& args) {
  Process step(WEIR_CMAKE_COMMAND, args);
  const auto status = step.wait(kBuildTimeout);
  INFO(step.out());
  INFO(step.err());
  REQUIRE(status.exited);
  REQUIRE(status.code == 0);
}

}  // namespace

TEST_SUITE("shard_host.example") {

TEST_CASE("the third-party gain shard builds out of tree and scales a live i16 channel exactly") {
  TempDir dir;
  const std::string build = dir.path + "/build";
  run_step({"-S", WEIR_EXAMPLE_SHARD_DIR, "-B", build, "-G", WEIR_CMAKE_GENERATOR, "-DWEIR_INCLUDE_DIR=" WEIR_SHARD_INCLUDE_DIR,
            "-DCMAKE_C_COMPILER=" WEIR_C_COMPILER, "-DCMAKE_BUILD_TYPE=Release"});
  run_step({"--build", build});
  const std::string so = build + "/libweir_gain.so";
  REQUIRE(std::filesystem::exists(so));

  {
    auto shard = shard_host::load_shard(so);
    REQUIRE_MESSAGE(shard, (shard ? "" : shard.error().what));
    CHECK(shard->kind() == "gain");
    CHECK(shard_host::dtype_list(shard->api().input_dtypes) == "i16, i32, f32, f64");
  }

  test::ScratchArena scratch("shardexample");
  const core::Arena& arena = scratch.arena();
  test::make_channel(arena, "adc0", core::Dtype::i16, 128, 12800);
  auto host = Process::weir({"shard", scratch.name(), so, "--input", "adc0", "--param", "gain=2", "--param",
                             "offset=0.5", "--policy", "lossless"});
  REQUIRE(test::wait_until([&] {
    const auto c = test::consumer_info(arena, "adc0", "gain.adc0");
    return c.has_value() && c->alive && !c->kind.empty();
  }));
  const auto sim = test::run_weir_once({"sim", scratch.name(), "adc0", "--rate", "12800", "--block", "128", "--dtype",
                                        "i16", "--blocks", "30", "--fast", "--amplitude", "3"});
  REQUIRE(sim.status.code == test::kExitOk);
  REQUIRE(test::wait_until([&] { return test::consumer_info(arena, "adc0", "gain.adc0")->blocks_read == 30; }));

  const auto out_info = test::channel_info(arena, "adc0.gain");
  REQUIRE(out_info);
  CHECK(out_info->dtype == core::Dtype::f32);
  CHECK(out_info->units == test::channel_info(arena, "adc0")->units);
  const auto in = test::ring_blocks(arena, "adc0");
  const auto out = test::ring_blocks(arena, "adc0.gain");
  REQUIRE(in.size() == 30);
  REQUIRE(out.size() == 30);
  std::size_t mismatches = 0;
  std::int16_t peak = 0;
  for (std::size_t b = 0; b < in.size(); ++b) {
    REQUIRE(out[b].bytes.size() == in[b].bytes.size() * 2);  // i16 in, f32 out
    CHECK(out[b].realtime_ns == in[b].realtime_ns);
    for (std::size_t i = 0; i < in[b].bytes.size() / sizeof(std::int16_t); ++i) {
      std::int16_t x = 0;
      float y = 0;
      std::memcpy(&x, in[b].bytes.data() + i * sizeof x, sizeof x);
      std::memcpy(&y, out[b].bytes.data() + i * sizeof y, sizeof y);
      if (y != static_cast<float>(2.0 * x + 0.5)) ++mismatches;
      peak = std::max<std::int16_t>(peak, x);
    }
  }
  CHECK(mismatches == 0);
  CHECK(peak > 1000);  // a real signal went through, not zeros

  host->signal(SIGTERM);
  CHECK(host->wait().code == test::kExitOk);
  CHECK(contains(host->out(), "gain.adc0: blocks in 30, out 30, lost 0, skipped 0, errors 0"));
}

}  // TEST_SUITE

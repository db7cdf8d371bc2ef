// The channel pool as a user sizes it: `weir create --pool`, a pipeline's `pool_mib`, and a pool sized
// from the pipeline's channels when the file names none; refusals that say what is needed and what was given.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "background_weir.hpp"
#include "json.hpp"
#include "run_weir.hpp"
#include "weir/core/arena.hpp"
#include "weir/core/channel.hpp"

using namespace weir::test;
using namespace std::chrono_literals;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string unique_arena(const char* what) {
  static int counter = 0;
  return std::string("pool") + what + std::to_string(getpid()) + "_" + std::to_string(counter++);
}

struct Pipeline {
  explicit Pipeline(const std::string& text) : arena(unique_arena("run")), path("/tmp/weir-pool-test-" + arena + ".lua") {
    std::string body = text;
    for (std::size_t at; (at = body.find("ARENA")) != std::string::npos;) body.replace(at, 5, arena);
    std::ofstream(path) << body;
  }
  void rewrite(const std::string& text) const {
    std::string body = text;
    for (std::size_t at; (at = body.find("ARENA")) != std::string::npos;) body.replace(at, 5, arena);
    std::ofstream(path) << body;
  }
  ~Pipeline() {
    std::remove(path.c_str());
    (void)weir::core::Arena::remove(arena);
  }
  std::string arena, path;
};

std::uint64_t physical_memory() {
  return static_cast<std::uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

// 8192 x 4 B x 2048 blocks: a 64 MiB ring, four times the pool of an arena made by hand.
constexpr const char* kBigRing = "channel \"a\" { rate = 20000, block = 8192, ring = 2048 }\n";

std::uint64_t big_ring_footprint() {
  weir::core::ChannelSpec spec;
  spec.name = "a";
  spec.rate_hz = 20000;
  spec.samples_per_block = 8192;
  spec.ring_blocks = 2048;
  return weir::core::channel_footprint(spec);
}

std::string mib_text(std::uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f MiB", static_cast<double>(bytes) / 1048576.0);
  return buf;
}

}  // namespace

TEST_SUITE("tools.pool") {

TEST_CASE("weir create --pool 64 makes an arena whose channel pool is 64 MiB, and 16 MiB without --pool") {
  const std::string name = unique_arena("create");
  const auto r = run_weir({"create", name, "--pool", "64", "--json"});
  REQUIRE(r.exit_code == kExitOk);
  CHECK(contains(r.out, "\"channel_data_bytes\":67108864"));
  {
    auto arena = weir::core::Arena::open(name, {.read_only = true});
    REQUIRE(arena);
    CHECK(arena->geometry().channel_data_bytes == 64ULL << 20);
  }
  const auto ls = run_weir({"info", name});
  CHECK(contains(ls.out, "(channel pool 64.0 MiB)"));
  REQUIRE(run_weir({"rm", name}).exit_code == kExitOk);

  REQUIRE(run_weir({"create", name}).exit_code == kExitOk);
  {
    auto arena = weir::core::Arena::open(name, {.read_only = true});
    REQUIRE(arena);
    CHECK(arena->geometry().channel_data_bytes == weir::core::kDefaultChannelDataBytes);
  }
  CHECK(run_weir({"rm", name}).exit_code == kExitOk);
}

TEST_CASE("a pool larger than the machine holds is refused with the limit and its reason, and nothing is made") {
  const std::string name = unique_arena("huge");
  const std::uint64_t mib = physical_memory() / (1ULL << 20) * 2;
  REQUIRE(mib < (1ULL << 20));  // under the 1 TiB arena limit, so the machine's limit is the one that refuses
  const auto r = run_weir({"create", name, "--pool", std::to_string(mib)});
  CHECK(r.exit_code != kExitOk);
  CHECK(contains(r.err, "cannot create '" + name + "'"));
  CHECK(contains(r.err, "a channel pool of " + std::to_string(mib) + ".0 MiB"));
  CHECK((contains(r.err, "physical memory") || contains(r.err, "the size of the file system at /dev/shm")));
  CHECK_FALSE(weir::core::Arena::open(name));
}

TEST_CASE("a channel that does not fit the pool is refused with what it needs and what is free") {
  const std::string name = unique_arena("full");
  REQUIRE(run_weir({"create", name, "--pool", "1"}).exit_code == kExitOk);
  const auto r = run_weir({"sim", name, "a", "--rate", "100000", "--block", "65536", "--blocks", "1", "--fast"});
  CHECK(r.exit_code != kExitOk);
  CHECK(contains(r.err, "channel 'a' in arena '" + name + "'"));
  CHECK(contains(r.err, "but the arena's channel pool has 1048576 of 1048576 bytes free"));
  CHECK(contains(r.err, "weir create --pool"));
  CHECK(run_weir({"rm", name}).exit_code == kExitOk);
}

TEST_CASE("pool_mib too small for the declared channels: weir check and weir run refuse it, naming the file") {
  Pipeline p(std::string("arena { name = \"ARENA\", pool_mib = 1 }\n") + kBigRing + "driver \"sim\" { channels = {\"a\"} }\n");
  const std::uint64_t needed = big_ring_footprint();
  const std::string message = p.path + ":1: the channels' rings need " + mib_text(needed) +
                              " but the arena's channel pool is 1.0 MiB; set pool_mib = " +
                              std::to_string((needed + (1ULL << 20) - 1) >> 20) + " or more";
  const auto check = run_weir({"check", p.path});
  CHECK(check.exit_code != kExitOk);
  CHECK(contains(check.err, message));
  const auto run = run_weir({"run", p.path, "--duration", "1"});
  CHECK(run.exit_code != kExitOk);
  CHECK(contains(run.err + run.out, message));
  CHECK_FALSE(contains(run.out, "started driver"));
  CHECK_FALSE(weir::core::Arena::open(p.arena));  // refused before anything was made
}

TEST_CASE("a bad pool_mib is refused with file:line like any setting") {
  Pipeline zero("arena { name = \"ARENA\",\n pool_mib = 0 }\n");
  const auto r = run_weir({"check", zero.path});
  CHECK(r.exit_code != kExitOk);
  CHECK(contains(r.err, zero.path + ":1: arena: 'pool_mib' = 0 must be more than 0 and at most 1048576 (MiB)"));
  Pipeline both("arena { name = \"ARENA\", pool_mib = 8, channel_mb = 8 }\n");
  CHECK(contains(run_weir({"check", both.path}).err, "'pool_mib' and 'channel_mb' name the same channel pool"));
  Pipeline text("arena { name = \"ARENA\", pool_mib = \"big\" }\n");
  CHECK(contains(run_weir({"check", text.path}).err, text.path + ":1: arena: 'pool_mib' must be a number, not "));
}

TEST_CASE("without pool_mib, weir run sizes the pool from the channels and a pipeline of big rings runs") {
  Pipeline p(std::string("arena { name = \"ARENA\" }\n") + kBigRing + "driver \"sim\" { channels = {\"a\"} }\n");
  const auto check = run_weir({"check", p.path});
  REQUIRE(check.exit_code == kExitOk);
  CHECK(contains(check.out, "channel pool sized from the channels"));

  const std::uint64_t footprint = big_ring_footprint();
  REQUIRE(footprint > weir::core::kDefaultChannelDataBytes);  // the old fixed pool would have refused it

  BackgroundWeir run({"run", p.path, "--status-every", "0"});
  std::uint64_t pool = 0;
  std::uint64_t written = 0;
  CHECK(eventually(
      [&] {
        auto arena = weir::core::Arena::open(p.arena, {.read_only = true});
        if (!arena) return false;
        pool = arena->geometry().channel_data_bytes;
        for (const auto& c : weir::core::list_channels(*arena))
          if (c.name == "a") written = c.samples_written;
        return written > 0;
      },
      15s));
  CHECK(pool >= footprint);
  CHECK(pool <= footprint + footprint / 4 + (1ULL << 20));  // a quarter to spare, in whole MiB
  CHECK(pool % (1ULL << 20) == 0);
  REQUIRE(run.signal(SIGINT));
  CHECK(run.wait_exit(20s) == kExitOk);
  CHECK_FALSE(contains(run.output(), "does not fit"));
}

TEST_CASE("a reload that adds a shard to a pool sized from the channels keeps the arena and makes the output") {
  const std::string head = std::string("arena { name = \"ARENA\" }\n") + kBigRing + "driver \"sim\" { channels = {\"a\"} }\n";
  Pipeline p(head);
  BackgroundWeir run({"run", p.path, "--status-every", "0"});
  const auto has_channel = [&](const std::string& name) {
    auto arena = weir::core::Arena::open(p.arena, {.read_only = true});
    if (!arena) return false;
    for (const auto& c : weir::core::list_channels(*arena))
      if (c.name == name) return true;
    return false;
  };
  REQUIRE(eventually([&] { return has_channel("a"); }, 10s));
  // The file alone would now size the pool 100 MiB instead of 88: the running arena's 88 still holds both.
  p.rewrite(head + "shard \"fft\" { input = \"a\", size = 65536 }\n");
  REQUIRE(run_weir({"reload", p.arena}).exit_code == kExitOk);
  CHECK(eventually([&] { return has_channel("a.psd"); }, 10s));
  REQUIRE(run.signal(SIGINT));
  CHECK(run.wait_exit(20s) == kExitOk);
  const std::string out = run.output();
  CHECK(contains(out, "reload: adding shard \"fft:a\""));
  CHECK_FALSE(contains(out, "the arena changed"));
  CHECK_FALSE(contains(out, "do not fit"));
  CHECK_FALSE(contains(out, "not applied"));
}

}  // TEST_SUITE

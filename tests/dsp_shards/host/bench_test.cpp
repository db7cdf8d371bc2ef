// The benchmark hook runs a shard through the real host path for a fixed number of blocks.
#include <doctest/doctest.h>

#include "host_test_util.hpp"
#include "live_arena.hpp"
#include "weir/bench/shard_bench.hpp"

using namespace weir;

TEST_SUITE("shard_host.bench") {

TEST_CASE("bench_shard pushes every block through the null shard without loss and reports figures") {
  test::ScratchArena scratch("shardbench");
  bench::ShardBenchOptions o;
  o.blocks = 3000;
  o.samples_per_block = 256;
  o.ring_blocks = 64;
  auto r = bench::bench_shard(scratch.arena(), o);
  REQUIRE_MESSAGE(r, (r ? "" : r.error().what));
  CHECK(r->blocks == 3000);
  CHECK(r->lost == 0);
  CHECK(r->errors == 0);
  CHECK(r->blocks_per_s > 0);
  CHECK(r->samples_per_s == doctest::Approx(r->blocks_per_s * 256));
  CHECK(r->p50_ns > 0);
  CHECK(r->p99_ns >= r->p50_ns);
  const auto row = test::channel_info(scratch.arena(), o.channel);
  REQUIRE(row);
  CHECK(row->blocks_written == 3000);
  CHECK(row->dropped_at_source == 0);
  CHECK(row->consumers.empty());  // the bench's consumer left the table
}

TEST_CASE("bench_shard runs a shard with outputs, and a second run on the same channel works") {
  test::ScratchArena scratch("shardbench");
  bench::ShardBenchOptions o;
  o.shard = "copy";
  o.blocks = 500;
  o.samples_per_block = 128;
  for (int run = 0; run < 2; ++run) {
    auto r = bench::bench_shard(scratch.arena(), o);
    REQUIRE_MESSAGE(r, (r ? "" : r.error().what));
    CHECK(r->blocks == 500);
    CHECK(r->lost == 0);
  }
  CHECK(test::channel_info(scratch.arena(), o.channel + ".copy")->blocks_written == 1000);
}

TEST_CASE("bench_shard refuses an unknown shard and a bad parameter before running") {
  test::ScratchArena scratch("shardbench");
  bench::ShardBenchOptions o;
  o.shard = "nul";
  CHECK(test::contains(bench::bench_shard(scratch.arena(), o).error().what, "did you mean 'null'"));
  o.shard = "copy";
  o.params = {{"sufix", "x"}};
  CHECK(test::contains(bench::bench_shard(scratch.arena(), o).error().what, "did you mean 'suffix'"));
}

}  // TEST_SUITE

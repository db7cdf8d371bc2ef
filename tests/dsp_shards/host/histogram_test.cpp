// The latency histogram behind proc_p50_ns / proc_p99_ns.
#include <doctest/doctest.h>

#include <cstdint>

#include "weir/shard_host/latency_histogram.hpp"

using weir::shard_host::LatencyHistogram;

TEST_SUITE("shard_host.latency_histogram") {

TEST_CASE("small durations are exact and an empty histogram reports zero") {
  LatencyHistogram h;
  CHECK(h.percentile(0.5) == 0);
  for (std::uint64_t v : {3U, 3U, 7U, 9U}) h.add(v);
  CHECK(h.count() == 4);
  CHECK(h.percentile(0.5) == 3);
  CHECK(h.percentile(0.75) == 7);
  CHECK(h.percentile(1.0) == 9);
}

TEST_CASE("every value lands in a bucket whose midpoint is within 1/16 of it") {
  for (std::uint64_t v = 16; v < (std::uint64_t{1} << 40); v = v * 3 + 1) {
    const std::uint32_t b = LatencyHistogram::bucket_of(v);
    REQUIRE(b < LatencyHistogram::kBuckets);
    CHECK(LatencyHistogram::lower_bound(b) <= v);
    if (b + 1 < LatencyHistogram::kBuckets) CHECK(v < LatencyHistogram::lower_bound(b + 1));
    const double mid = static_cast<double>(LatencyHistogram::midpoint(b));
    CHECK(mid == doctest::Approx(static_cast<double>(v)).epsilon(1.0 / 16));
  }
}

TEST_CASE("p50 and p99 of a uniform spread match the true quantiles within the bucket error") {
  LatencyHistogram h;
  for (std::uint64_t v = 1; v <= 10'000; ++v) h.add(v * 100);  // 100 ns .. 1 ms
  CHECK(static_cast<double>(h.percentile(0.5)) == doctest::Approx(500'000.0).epsilon(1.0 / 16));
  CHECK(static_cast<double>(h.percentile(0.99)) == doctest::Approx(990'000.0).epsilon(1.0 / 16));
  h.clear();
  CHECK(h.count() == 0);
  CHECK(h.percentile(0.99) == 0);
}

TEST_CASE("one slow outlier in a hundred shows in p99 but not in p50") {
  LatencyHistogram h;
  for (int i = 0; i < 98; ++i) h.add(1'000);
  h.add(5'000'000);
  h.add(5'000'000);
  CHECK(h.percentile(0.5) < 1'100);
  CHECK(h.percentile(0.99) > 4'000'000);
}

}  // TEST_SUITE

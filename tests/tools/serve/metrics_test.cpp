// /metrics's own parts: /proc/<pid>/stat parsing for process_*, and the exposition over a real arena
// (rates from block stamps, absolute paths and arena, no pid label).
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <string>

#include <sys/timex.h>

#include "arena_guard.hpp"
#include "clock_metrics.hpp"
#include "process_metrics.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/clock.hpp"
#include "weir/runctl/doors.hpp"
#include "weir/serve/metrics.hpp"

using namespace weir;
using weir::test::ArenaGuard;
using weir::test::unique_name;

namespace {

// The value of the first sample line of `name` whose labels contain `labels`; NaN when none.
double sample(const std::string& text, const std::string& name, const std::string& labels = {}) {
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = text.find('\n', at);
    const std::string line = text.substr(at, end - at);
    at = end == std::string::npos ? text.size() : end + 1;
    if (!line.starts_with(name) || (line.size() > name.size() && line[name.size()] != '{' && line[name.size()] != ' '))
      continue;
    if (!labels.empty() && line.find(labels) == std::string::npos) continue;
    return std::stod(line.substr(line.rfind(' ') + 1));
  }
  return std::nan("");
}

}  // namespace

TEST_SUITE("serve.metrics") {

TEST_CASE("a /proc stat line parses past a command holding spaces and parentheses") {
  // Fields from proc(5): utime 14, stime 15, starttime 22, vsize 23, rss 24.
  const std::string line =
      "4242 (we ir) (x)) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 50 0 0 20 0 3 0 12345 "
      "246415360 4260 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
  const auto p = serve::parse_proc_stat(line, 1'700'000'000, 100, 4096);
  REQUIRE(p.has_value());
  CHECK(p->cpu_seconds == doctest::Approx(3.0));
  CHECK(p->start_time_seconds == doctest::Approx(1'700'000'123.45));
  CHECK(p->virtual_bytes == 246415360);
  CHECK(p->resident_bytes == 4260ULL * 4096);
  CHECK_FALSE(serve::parse_proc_stat("4242 (weir) S 1 2 3", 1'700'000'000, 100, 4096).has_value());
  CHECK_FALSE(serve::parse_proc_stat("no command here", 1'700'000'000, 100, 4096).has_value());
}

TEST_CASE("the clock counts as synchronised only without TIME_ERROR and without STA_UNSYNC") {
  CHECK(serve::clock_sync_from(TIME_OK, 0, 16000, 500).synchronized);
  CHECK_FALSE(serve::clock_sync_from(TIME_OK, STA_UNSYNC, 16000, 500).synchronized);
  CHECK_FALSE(serve::clock_sync_from(TIME_ERROR, 0, 16000, 500).synchronized);
  CHECK(serve::clock_sync_from(TIME_OK, STA_PLL, 16000, 500).max_error_s == doctest::Approx(0.016));
  CHECK(serve::clock_sync_from(TIME_OK, STA_PLL, 16000, 500).estimated_error_s == doctest::Approx(0.0005));
}

TEST_CASE("this process's figures come from /proc/self") {
  const auto p = serve::read_process_stats();
  REQUIRE(p.has_value());
  CHECK(p->resident_bytes > 0);
  CHECK(p->virtual_bytes >= p->resident_bytes);
  CHECK(p->open_fds >= 3);
  CHECK(p->start_time_seconds > static_cast<double>(std::time(nullptr)) - 3600);
  CHECK(p->start_time_seconds <= static_cast<double>(std::time(nullptr)) + 1);
}

TEST_CASE("the exposition gives rates from the blocks' stamps, absolute paths and no pid label") {
  const ArenaGuard guard(unique_name("metrics"));
  core::ArenaOptions o;
  o.slot_count = 64;
  o.vector_dim = 0;
  o.channel_capacity = 2;
  o.channel_data_bytes = 1ULL << 20;
  auto arena = core::Arena::create(guard.where(), o);
  REQUIRE(arena.has_value());
  core::ChannelSpec spec;
  spec.name = "adc";
  spec.rate_hz = 1e5;
  spec.samples_per_block = 100;
  spec.ring_blocks = 64;
  REQUIRE(core::create_channel(*arena, spec).has_value());
  auto writer = core::ChannelWriter::open(*arena, "adc");
  REQUIRE(writer.has_value());
  // 20 blocks 100 ms apart: 10 blocks/s, 1000 samples/s. The newest is stamped a second ahead, so
  // however late this scrape runs on a busy machine the writer is not yet late (which would decay the rate).
  const auto ahead = static_cast<std::uint64_t>(core::monotonic_ns()) + 1'000'000'000;
  for (std::uint64_t i = 0; i < 20; ++i) {
    std::span<std::byte> out;
    REQUIRE(writer->claim(out) == core::ClaimStatus::ok);
    std::memset(out.data(), 0, out.size());
    const std::uint64_t stamp = ahead - (19 - i) * 100'000'000;
    writer->publish(100, stamp, stamp, 0);
  }
  const std::string text = serve::prometheus_text(*arena, {"."});
  CHECK(sample(text, "weir_channel_blocks_per_second", "channel=\"adc\"") == doctest::Approx(10.0));
  CHECK(sample(text, "weir_channel_samples_per_second", "channel=\"adc\"") == doctest::Approx(1000.0));
  CHECK(sample(text, "weir_channel_newest_block_age_seconds", "channel=\"adc\"") < 1.0);
  CHECK(sample(text, "weir_channel_sample_rate_hertz", "channel=\"adc\"") == 1e5);
  CHECK(sample(text, "weir_channel_ring_blocks", "channel=\"adc\"") == 64);
  CHECK(sample(text, "weir_clock_synchronized") >= 0);  // this machine's state, whatever it is
  CHECK(sample(text, "weir_clock_max_error_seconds") >= 0);
  CHECK(std::isnan(sample(text, "weir_run_last_closed_exact")));  // no run closed yet: no sample
  runctl::publish_closed(*arena, 7, false);
  const std::string closed = serve::prometheus_text(*arena, {});
  CHECK(sample(closed, "weir_run_last_closed_number") == 7);
  CHECK(sample(closed, "weir_run_last_closed_exact") == 0);
  runctl::publish_closed(*arena, 8, true);
  CHECK(sample(serve::prometheus_text(*arena, {}), "weir_run_last_closed_exact") == 1);
  const std::string cwd = std::filesystem::current_path().lexically_normal().string();
  CHECK_MESSAGE(sample(text, "weir_disk_free_bytes", "path=\"" + cwd + "\"") > 0, text);
  CHECK(sample(text, "weir_arena_info", "path=\"/dev/shm/weir." + guard.where() + "\"") == 1);
  CHECK(text.find("pid=") == std::string::npos);
  CHECK(sample(text, "process_resident_memory_bytes") > 0);
  CHECK(sample(text, "process_open_fds") >= 3);
}

}  // TEST_SUITE

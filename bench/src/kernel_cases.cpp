// `weir bench kernels`: each built-in shard's process() called directly on blocks in memory (no
// host, no arena), timed in alternation with the bare kernel it is built from, in the same run:
// - stats on f32 blocks against a bare vectorised min/max/sum pass over the same blocks;
// ns per sample, and the ratio of the two.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "extra_suites.hpp"
#include "harness.hpp"
#include "suite_report.hpp"
#include "weir/shard.h"
#include "weir/shard_fake_host.hpp"
#include "weir/shard_host/loader.hpp"

namespace weir::bench {

namespace {

constexpr std::uint32_t kBlock = 4096;          // samples per block, as `weir bench shards` and the pipelines use
constexpr std::uint32_t kDistinctBlocks = 64;   // blocks cycled over: 1 MiB of f32, an L2-sized working set
constexpr std::size_t kSinkBytes = 1U << 20;    // what the sink host hands out per claimed output block
constexpr std::size_t kFloorLanes = 16;         // independent accumulators of the bare pass
constexpr double kStatsTargetNs = 1.0;          // stats: at most this many ns per sample

constexpr const char* kUsage =
    "usage: weir bench kernels [--json] [--reps N] [--quick]\n"
    "  each shard's process() on blocks in memory, timed in alternation with its bare kernel:\n"
    "  stats against a vectorised min/max/sum pass\n"
    "  --json     one JSON object per result line on stdout\n"
    "  --reps N   repetitions per case, 1..1000 (default 5); the median is reported\n"
    "  --quick    a tenth of the time per repetition (for tests)\n";

inline constexpr std::string_view kUnitNsPerSample = "ns/sample";

// A host that takes every output and keeps nothing: key writes and channel blocks go to a sink,
// so the figure is the shard's own work.
struct SinkHost {
  std::vector<std::byte> sink = std::vector<std::byte>(kSinkBytes);
  std::uint64_t keys = 0;
  std::uint64_t published = 0;

  weir_shard_host table() noexcept {
    weir_shard_host h{};
    h.self = this;
    h.claim = [](void* self, std::uint32_t, std::uint32_t* capacity) -> void* {
      auto* host = static_cast<SinkHost*>(self);
      *capacity = static_cast<std::uint32_t>(host->sink.size() / sizeof(double));  // enough for any dtype's block
      return host->sink.data();
    };
    h.publish = [](void* self, std::uint32_t, std::uint32_t, std::uint64_t, std::uint32_t) {
      ++static_cast<SinkHost*>(self)->published;
    };
    h.set_key = [](void* self, std::uint32_t, const void* value, std::size_t bytes) {
      auto* host = static_cast<SinkHost*>(self);
      double v = 0;
      std::memcpy(&v, value, std::min(bytes, sizeof v));
      keep(v);
      ++host->keys;
      return 0;
    };
    h.log = [](void*, int, const char*) {};
    return h;
  }
};

// One configured built-in shard fed whole blocks of f32 from memory.
class ShardKernel {
 public:
  static core::Result<ShardKernel> create(const char* kind, shard_test::ShardConfig::Params params) {
    auto loaded = shard_host::load_shard(kind);
    if (!loaded) return tl::make_unexpected(loaded.error());
    ShardKernel k(std::move(*loaded), std::move(params));
    auto configured = shard_test::configure(k.shard_.api(), k.config_->build());
    if (configured.shard == nullptr)
      return core::fail(core::Errc::invalid_argument, std::string("configure ") + kind + ": " + configured.error);
    k.instance_ = configured.shard;
    return k;
  }
  ShardKernel(ShardKernel&& other) noexcept
      : shard_(std::move(other.shard_)), config_(std::move(other.config_)), instance_(std::exchange(other.instance_, nullptr)) {}
  ShardKernel& operator=(ShardKernel&&) = delete;
  ShardKernel(const ShardKernel&) = delete;
  ShardKernel& operator=(const ShardKernel&) = delete;
  ~ShardKernel() {
    if (instance_ != nullptr) shard_.api().stop(instance_);
  }

  bool process(const float* samples, std::uint64_t first_sample, const weir_shard_host& host) noexcept {
    const weir_shard_block in{samples, kBlock, 0, first_sample / kBlock, 0, 0, first_sample};
    return shard_.api().process(instance_, &in, &host) == 0;
  }

 private:
  ShardKernel(shard_host::LoadedShard shard, shard_test::ShardConfig::Params params)
      : shard_(std::move(shard)),
        config_(std::make_unique<shard_test::ShardConfig>("in", WEIR_DTYPE_F32, kBlock, 1e6, "V", std::move(params))) {}
  shard_host::LoadedShard shard_;
  std::unique_ptr<shard_test::ShardConfig> config_;  // on the heap: the config's pointers stay put when moved
  weir_shard* instance_ = nullptr;
};

// The bare floor of stats: min, max and sum of a block, lanes the compiler vectorises.
struct MinMaxSum {
  float lo, hi, sum;
};

[[gnu::target_clones("avx512f", "avx2", "default")]] MinMaxSum min_max_sum(const float* x, std::size_t n) noexcept {
  float lo[kFloorLanes], hi[kFloorLanes], sum[kFloorLanes];
  for (std::size_t j = 0; j < kFloorLanes; ++j) {
    lo[j] = hi[j] = x[0];
    sum[j] = 0;
  }
  for (std::size_t i = 0; i + kFloorLanes <= n; i += kFloorLanes)
    for (std::size_t j = 0; j < kFloorLanes; ++j) {
      const float v = x[i + j];
      sum[j] += v;
      lo[j] = v < lo[j] ? v : lo[j];
      hi[j] = hi[j] < v ? v : hi[j];
    }
  MinMaxSum out{lo[0], hi[0], sum[0]};
  for (std::size_t j = 1; j < kFloorLanes; ++j) {
    out.lo = std::min(out.lo, lo[j]);
    out.hi = std::max(out.hi, hi[j]);
    out.sum += sum[j];
  }
  return out;
}

std::vector<float> test_blocks() {
  std::vector<float> x(std::size_t{kDistinctBlocks} * kBlock);
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(0.5 * std::sin(static_cast<double>(i) * 0.001) + 0.01 * static_cast<double>(i % 17));
  return x;
}

// A paired result per sample: both sides' ns/op are per block.
void add_per_sample(Results& results, const std::string& name, const std::string& base_name, const Paired& p,
                    double samples_per_op) {
  const auto scaled = [samples_per_op](Stats s) {
    s.median_ns /= samples_per_op;
    s.min_ns /= samples_per_op;
    s.max_ns /= samples_per_op;
    return s;
  };
  Row base;
  base.name = base_name;
  base.unit = kUnitNsPerSample;
  base.stats = scaled(p.baseline.stats);
  if (results.find(base_name) == nullptr) results.add_row(base);
  Row row;
  row.name = name;
  row.unit = kUnitNsPerSample;
  row.stats = scaled(p.subject.stats);
  row.baseline = base_name;
  row.ratio = p.ratio.median_ns;
  row.paired_ratio = p.ratio;
  row.paired_with = base_name;
  results.add_row(row);
  if (p.subject.failures != 0) results.note_failures(name, p.subject.failures, p.subject.calls, "process() failed");
}

void stats_case(const Config& config, Results& results, const std::vector<float>& blocks) {
  auto stats = ShardKernel::create("stats", {{"window", "40960"}});
  if (!stats) {
    results.note_error("kernel.stats", stats.error().what);
    return;
  }
  SinkHost sink;
  const weir_shard_host host = sink.table();
  const auto block_at = [&blocks](std::uint64_t i) { return blocks.data() + (i % kDistinctBlocks) * kBlock; };
  const Paired p = measure_paired(
      config,
      [&](std::uint64_t i) noexcept {
        const MinMaxSum m = min_max_sum(block_at(i), kBlock);
        keep(m);
        return true;
      },
      [&](std::uint64_t i) noexcept { return stats->process(block_at(i), i * kBlock, host); });
  add_per_sample(results, "kernel.stats.f32", "base.min_max_sum.f32", p, kBlock);
  Row* row = nullptr;
  for (Row& r : results.rows())
    if (r.name == "kernel.stats.f32") row = &r;
  if (row != nullptr) {
    char target[32];
    std::snprintf(target, sizeof target, "<=%.1fns", kStatsTargetNs);
    row->target = target;
    row->pass = row->stats.median_ns <= kStatsTargetNs;
  }
}

}  // namespace

int run_kernel_suite(const std::vector<std::string>& args) {
  int exit_code = kExitOk;
  const auto maybe_config = parse_suite_options(args, kUsage, exit_code);
  if (!maybe_config) return exit_code;
  const Config& config = *maybe_config;
  warn_if_unoptimised();
  Results results;
  const std::vector<float> blocks = test_blocks();
  stats_case(config, results, blocks);
  char title[160];
  std::snprintf(title, sizeof title,
                "weir bench kernels: ns per sample, median/min/max of %d repetitions, each paired with its floor%s",
                config.reps, config.quick ? " (--quick)" : "");
  print_report(results.rows(), Fields{}, config.json, title);
  return exit_status(results);
}

}  // namespace weir::bench

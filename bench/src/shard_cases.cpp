// `weir bench shards`: the fft shard (4096 points, Hann, power spectrum) through the shard host and
// the arena, against a bare loop doing the same work on the same data in this binary (FFTW r2c,
// window, |X|^2 with the shard's scaling); each shard's processing time per block at 1 MS/s input;
// the host's own overhead (a shard that does nothing).
// The target line drains blocks published before its clock starts, so host and bare loop each
// have one core; the with_writer line runs a writer thread beside the host, as acquisition would
// (on two cores that writer competes with the host and the machine's other work).
#include <fftw3.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <complex>
#include <cstdio>
#include <numbers>
#include <string>
#include <vector>

#include "extra_suites.hpp"
#include "harness.hpp"
#include "suite_report.hpp"
#include "weir/core/arena.hpp"
#include "weir/bench/shard_bench.hpp"

namespace weir::bench {

namespace {

constexpr std::uint32_t kFftSize = 4096;
constexpr std::uint64_t kFftBlocks = 2'048;        // per repetition, published first (--quick: a tenth)
constexpr std::uint64_t kFftFedBlocks = 20'000;    // per repetition with a writer thread beside the host
constexpr std::uint64_t kNullBlocks = 200'000;
constexpr std::uint64_t kLatencyBlocks = 2'000;    // per shard for the p50/p99 lines
constexpr std::uint32_t kLatencyBlock = 4096;      // samples per block at 1 MS/s: 244 blocks/s
constexpr double kFftTarget = 0.9;                 // the shard's rate over the bare loop's, at least

constexpr const char* kUsage =
    "usage: weir bench shards [--json] [--reps N] [--quick]\n"
    "  the fft shard (4096 points, Hann, power) through the host and the arena against a bare\n"
    "  FFTW + window + |X|^2 loop; per-block processing time of every shard at 1 MS/s; the\n"
    "  host's overhead with a shard that does nothing\n"
    "  --json     one JSON object per result line on stdout\n"
    "  --reps N   repetitions per case, 1..1000 (default 5); the median is reported\n"
    "  --quick    a tenth of the blocks (for tests)\n";

// The shard's work without the shard: frames of kFftSize samples (no overlap), Hann window,
// FFTW r2c, |X|^2 scaled to a one-sided power spectrum. Same data as the shard gets: the same
// number of distinct blocks (so input comes from memory, not a hot cache, as the arena's ring does)
// and spectra written round a ring of the output channel's size.
double bare_fft_blocks_per_s(std::uint64_t blocks, std::uint64_t distinct) {
  constexpr std::uint32_t kBins = kFftSize / 2 + 1;
  constexpr std::uint32_t kOutputRing = 64;  // the output channel's ring (the host's default)
  std::vector<float> input(distinct * kFftSize), window(kFftSize), output(std::size_t{kOutputRing} * kBins);
  for (std::size_t i = 0; i < input.size(); ++i) input[i] = static_cast<float>(i % 1024) / 1024.0F;
  for (std::uint32_t i = 0; i < kFftSize; ++i)
    window[i] = static_cast<float>(0.5 - 0.5 * std::cos(2 * std::numbers::pi * i / kFftSize));
  double sum = 0;
  for (float w : window) sum += w;
  const auto scale = static_cast<float>(2.0 / (sum * sum));
  float* frame = fftwf_alloc_real(kFftSize);
  fftwf_complex* spectrum = fftwf_alloc_complex(kBins);
  fftwf_plan plan = fftwf_plan_dft_r2c_1d(static_cast<int>(kFftSize), frame, spectrum, FFTW_MEASURE);
  const std::int64_t start = core::monotonic_ns();
  for (std::uint64_t b = 0; b < blocks; ++b) {
    const float* in = input.data() + (b % distinct) * kFftSize;
    for (std::uint32_t i = 0; i < kFftSize; ++i) frame[i] = in[i] * window[i];
    fftwf_execute(plan);
    float* power = output.data() + (b % kOutputRing) * kBins;
    for (std::uint32_t k = 0; k < kBins; ++k)
      power[k] = (spectrum[k][0] * spectrum[k][0] + spectrum[k][1] * spectrum[k][1]) * scale;
    keep(power[b % kBins]);
  }
  const std::int64_t elapsed = core::monotonic_ns() - start;
  fftwf_destroy_plan(plan);
  fftwf_free(spectrum);
  fftwf_free(frame);
  return static_cast<double>(blocks) * 1e9 / static_cast<double>(std::max<std::int64_t>(elapsed, 1));
}

struct ShardCase {
  const char* name;
  const char* shard;
  std::vector<shard_host::ParamArg> params;
};

std::vector<ShardCase> latency_cases() {
  return {
      {"fft", "fft", {{"size", "4096"}, {"window", "hann"}, {"spectrum", "power"}, {"overlap", "0"}}},
      {"filter", "filter", {{"type", "lowpass"}, {"cutoff", "100000"}, {"taps", "101"}, {"decimate", "4"}}},
      {"stats", "stats", {{"window", "40960"}}},
      {"trigger", "trigger", {{"mode", "rising"}, {"level", "0.5"}, {"pre", "256"}, {"post", "768"}}},
      {"mca", "mca", {{"threshold", "0.05"}}},
      {"null", "null", {}},
  };
}

core::Result<ShardBenchResult> run_one(const core::Arena& arena, const char* shard,
                                                   std::vector<shard_host::ParamArg> params, std::uint32_t block,
                                                   std::uint64_t blocks, const std::string& channel,
                                                   bool prefill = false) {
  ShardBenchOptions o;
  o.prefill = prefill;
  if (prefill) o.ring_blocks = static_cast<std::uint32_t>(std::bit_ceil(blocks));
  o.shard = shard;
  o.params = std::move(params);
  o.channel = channel;
  o.samples_per_block = block;
  o.rate_hz = 1e6;
  o.blocks = blocks;
  return bench_shard(arena, o);
}

Row rate_row(std::string name, std::vector<double> rates) {
  Row row;
  row.name = std::move(name);
  row.unit = kUnitBlocksPerS;
  row.stats = summarize(std::move(rates));
  return row;
}

}  // namespace

int run_shard_suite(const std::vector<std::string>& args) {
  int exit_code = kExitOk;
  const auto maybe_config = parse_suite_options(args, kUsage, exit_code);
  if (!maybe_config) return exit_code;
  const Config& config = *maybe_config;
  const std::uint64_t divisor = config.quick ? 10 : 1;
  const std::string arena_name = "bench.shards." + std::to_string(::getpid());
  core::ArenaOptions options;
  options.channel_capacity = 64;
  options.channel_data_bytes = 256ULL << 20;
  options.vector_dim = 0;
  options.replace_stale = true;
  auto arena = core::Arena::create(arena_name, options);
  if (!arena) {
    std::fprintf(stderr, "weir bench: create arena '%s': %s\n", arena_name.c_str(), arena.error().what.c_str());
    return kExitFailed;
  }
  Results results;
  Fields fields;
  std::vector<double> bare, shard, fed, null_rates;
  int channel_no = 0;
  const auto fresh_channel = [&] { return "in" + std::to_string(channel_no++); };
  for (int rep = 0; rep < config.reps; ++rep) {
    bare.push_back(bare_fft_blocks_per_s(kFftFedBlocks / divisor, kFftBlocks / divisor));
    // The same blocks every repetition: the ring holds them all, published before the clock starts.
    auto fft = run_one(*arena, "fft", latency_cases()[0].params, kFftSize, kFftBlocks / divisor,
                       "fft.in." + std::to_string(divisor), true);
    auto with_writer =
        run_one(*arena, "fft", latency_cases()[0].params, kFftSize, kFftFedBlocks / divisor, fresh_channel());
    if (!fft || !with_writer) {
      results.note_error("shard.fft4096", !fft ? fft.error().what : with_writer.error().what);
      break;
    }
    if (fft->lost + fft->errors + with_writer->lost + with_writer->errors != 0)
      results.note_failures("shard.fft4096", fft->lost + fft->errors + with_writer->lost + with_writer->errors,
                            fft->blocks + with_writer->blocks, "lost or failed blocks");
    shard.push_back(fft->blocks_per_s);
    fed.push_back(with_writer->blocks_per_s);
    auto null = run_one(*arena, "null", {}, 1024, kNullBlocks / divisor, fresh_channel());
    if (!null) {
      results.note_error("shard.null.1024", null.error().what);
      break;
    }
    null_rates.push_back(null->blocks_per_s);
  }
  if (!bare.empty()) results.add_row(rate_row("base.fft4096.bare_loop", bare));
  if (!shard.empty()) results.add_row(rate_row("shard.fft4096.hann.power", shard));
  if (!fed.empty()) results.add_row(rate_row("shard.fft4096.with_writer", fed));
  if (!null_rates.empty()) results.add_row(rate_row("shard.null.host_overhead", null_rates));

  // Per-block processing time of every shard on 4096-sample blocks of a 1 MS/s channel.
  for (const ShardCase& c : latency_cases()) {
    auto r = run_one(*arena, c.shard, c.params, kLatencyBlock, kLatencyBlocks / divisor, fresh_channel());
    if (!r) {
      results.note_error(std::string("latency.") + c.name, r.error().what);
      continue;
    }
    for (const auto& [suffix, ns] : {std::pair{".p50", r->p50_ns}, std::pair{".p99", r->p99_ns}}) {
      Row row;
      row.name = std::string("latency.") + c.name + suffix;
      row.unit = kUnitNs;
      row.stats = summarize({static_cast<double>(ns)});
      results.add_row(row);
    }
    fields.add(std::string("latency.") + c.name + ".p50", "blocks", r->blocks);
  }
  arena->close();
  (void)core::Arena::remove(arena_name);

  const AtLeast comparisons[] = {{"shard.fft4096.hann.power", "base.fft4096.bare_loop", kFftTarget}};
  compare_at_least(results, comparisons);
  char title[256];
  std::snprintf(title, sizeof title,
                "weir bench shards: blocks/s (higher is better) and ns per block, median/min/max of %d "
                "repetitions%s",
                config.reps, config.quick ? " (--quick)" : "");
  print_report(results.rows(), fields, config.json, title);
  return results.failures() != 0 ? kExitFailed : kExitOk;
}

}  // namespace weir::bench

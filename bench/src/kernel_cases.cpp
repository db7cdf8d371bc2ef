// `weir bench kernels`: each built-in shard's process() called directly on blocks in memory (no
// host, no arena), timed in alternation with the bare kernel it is built from, in the same run:
// - stats on f32 blocks against a bare vectorised min/max/sum pass over the same blocks;
// - filter (101-tap low-pass, decimation by 4) on f32 blocks against its kernel alone (the polyphase
//   decimator), and that kernel against FFT convolution (overlap-save, FFTW r2c/c2r) of the same
//   filter, 101 and 1001 taps;
// - the simulator's gaussian noise (SignalGenerator::fill, f32) against memset and memcpy of the
//   same bytes;
// ns per input sample, and the ratio of each to its floor.
#include <fftw3.h>

#include <algorithm>
#include <complex>
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
#include "weir/acq/signal_generator.hpp"
#include "weir/core/target_clones.hpp"
#include "weir/dsp/decimator.hpp"
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
constexpr double kFirTargetNs = 5.0;            // filter 101 taps / 4: at least 200 MS/s per core
constexpr std::uint32_t kFirDecimate = 4;
constexpr std::size_t kFftConvSize = 4096;      // overlap-save transform length (101 taps); 8192 for 1001

constexpr const char* kUsage =
    "usage: weir bench kernels [--json] [--reps N] [--quick]\n"
    "  each shard's process() on blocks in memory, timed in alternation with its bare kernel:\n"
    "  stats against a vectorised min/max/sum pass; filter (101 taps, decimate 4) against its\n"
    "  polyphase kernel alone; FFT overlap-save against that kernel (101 and 1001 taps);\n"
    "  the simulator's gaussian noise against memset and memcpy of the same bytes\n"
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

WEIR_TARGET_CLONES MinMaxSum min_max_sum(const float* x, std::size_t n) noexcept {
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

// FFT convolution by overlap-save: each transform of `size` inputs (the last taps - 1 of the
// previous one in front) yields size - taps + 1 outputs; decimation keeps every step-th.
class OverlapSave {
 public:
  OverlapSave(const std::vector<float>& taps, std::size_t size)
      : size_(size), taps_(taps.size()), bins_(size / 2 + 1), frame_(fftwf_alloc_real(size)),
        spectrum_(fftwf_alloc_complex(bins_)), filter_(bins_) {
    std::fill(frame_, frame_ + size_, 0.0F);
    forward_ = fftwf_plan_dft_r2c_1d(static_cast<int>(size_), frame_, spectrum_, FFTW_MEASURE);
    inverse_ = fftwf_plan_dft_c2r_1d(static_cast<int>(size_), spectrum_, frame_, FFTW_MEASURE);
    std::fill(frame_, frame_ + size_, 0.0F);
    std::copy(taps.begin(), taps.end(), frame_);
    fftwf_execute(forward_);
    for (std::size_t k = 0; k < bins_; ++k)
      filter_[k] = std::complex<float>(spectrum_[k][0], spectrum_[k][1]) / static_cast<float>(size_);
  }
  OverlapSave(const OverlapSave&) = delete;
  OverlapSave& operator=(const OverlapSave&) = delete;
  ~OverlapSave() {
    fftwf_destroy_plan(forward_);
    fftwf_destroy_plan(inverse_);
    fftwf_free(spectrum_);
    fftwf_free(frame_);
  }
  [[nodiscard]] std::size_t outputs_per_frame() const noexcept { return size_ - taps_ + 1; }

  /// Filters x[0, size) (taps - 1 history samples first) into out: the outputs at inputs
  /// taps - 1, taps - 1 + step, ... that fall in the frame. Returns how many.
  std::size_t frame(const float* x, std::size_t step, float* out) noexcept {
    std::copy(x, x + size_, frame_);
    fftwf_execute(forward_);
    for (std::size_t k = 0; k < bins_; ++k) {
      const std::complex<float> v = std::complex<float>(spectrum_[k][0], spectrum_[k][1]) * filter_[k];
      spectrum_[k][0] = v.real();
      spectrum_[k][1] = v.imag();
    }
    fftwf_execute(inverse_);
    std::size_t n = 0;
    for (std::size_t i = taps_ - 1; i < size_; i += step) out[n++] = frame_[i];
    return n;
  }

 private:
  std::size_t size_, taps_, bins_;
  float* frame_;
  fftwf_complex* spectrum_;
  std::vector<std::complex<float>> filter_;
  fftwf_plan forward_{}, inverse_{};
};

std::vector<float> lowpass_taps(std::size_t n) {  // a Hamming-windowed sinc at a tenth of the rate
  std::vector<float> h(n);
  const double mid = static_cast<double>(n - 1) / 2;
  for (std::size_t i = 0; i < n; ++i) {
    const double t = static_cast<double>(i) - mid;
    const double sinc = t == 0 ? 0.2 : std::sin(0.2 * 3.141592653589793 * t) / (3.141592653589793 * t);
    h[i] = static_cast<float>(sinc * (0.54 - 0.46 * std::cos(2 * 3.141592653589793 * static_cast<double>(i) / static_cast<double>(n - 1))));
  }
  return h;
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

Row* find_row(Results& results, std::string_view name) {
  for (Row& r : results.rows())
    if (r.name == name) return &r;
  return nullptr;
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
  if (Row* row = find_row(results, "kernel.stats.f32")) {
    char target[32];
    std::snprintf(target, sizeof target, "<=%.1fns", kStatsTargetNs);
    row->target = target;
    row->pass = row->stats.median_ns <= kStatsTargetNs;
  }
}

void filter_case(const Config& config, Results& results, const std::vector<float>& blocks) {
  auto filter = ShardKernel::create("filter", {{"type", "lowpass"}, {"cutoff", "100000"}, {"taps", "101"},
                                               {"decimate", std::to_string(kFirDecimate)}});
  if (!filter) {
    results.note_error("kernel.filter", filter.error().what);
    return;
  }
  SinkHost sink;
  const weir_shard_host host = sink.table();
  const auto block_at = [&blocks](std::uint64_t i) { return blocks.data() + (i % kDistinctBlocks) * kBlock; };
  // The floor: the same filter's kernel alone (weir::dsp::Decimator, which the shard runs after
  // converting and chunking) on the same blocks, in order.
  auto bare = dsp::Decimator::create(kFirDecimate, lowpass_taps(101), 1e6);
  if (!bare) {
    results.note_error("kernel.filter", bare.error().what);
    return;
  }
  std::vector<float> out(kBlock);
  const Paired fir = measure_paired(
      config,
      [&](std::uint64_t i) noexcept {
        keep(bare->process(std::span<const float>(block_at(i), kBlock), out));
        return true;
      },
      [&](std::uint64_t i) noexcept { return filter->process(block_at(i), i * kBlock, host); });
  add_per_sample(results, "kernel.filter.fir101_dec4", "base.fir101_dec4.decimator", fir, kBlock);
  if (Row* row = find_row(results, "kernel.filter.fir101_dec4")) {
    char target[32];
    std::snprintf(target, sizeof target, "<=%.1fns", kFirTargetNs);
    row->target = target;
    row->pass = row->stats.median_ns <= kFirTargetNs;
  }
  // FFT convolution (overlap-save) of the same filter, and of a ten times longer one, against the
  // polyphase decimator making the same outputs.
  for (const std::size_t n : {std::size_t{101}, std::size_t{1001}}) {
    const std::vector<float> h = lowpass_taps(n);
    auto direct = dsp::Decimator::create(kFirDecimate, h, 1e6);
    if (!direct) {
      results.note_error("kernel.filter", direct.error().what);
      return;
    }
    OverlapSave conv(h, n > 101 ? 2 * kFftConvSize : kFftConvSize);
    const std::size_t span = conv.outputs_per_frame();  // input samples each frame advances
    const std::size_t frames = (blocks.size() - n) / span;
    std::vector<float> y(span);
    const Paired p = measure_paired(
        config,
        [&](std::uint64_t i) noexcept {
          keep(direct->process(std::span<const float>(blocks.data() + (i % frames) * span, span), y));
          return true;
        },
        [&](std::uint64_t i) noexcept {
          keep(conv.frame(blocks.data() + (i % frames) * span, kFirDecimate, y.data()));
          return true;
        });
    const std::string taps_name = "fir" + std::to_string(n) + "_dec4";
    add_per_sample(results, "base." + taps_name + ".fft_overlap_save", "base." + taps_name + ".polyphase", p,
                   static_cast<double>(span));
  }
}

void noise_case(const Config& config, Results& results) {
  acq::SignalConfig c;
  c.kind = acq::SignalKind::noise;
  c.sample_rate_hz = 1e6;
  c.seed = 1;
  auto generator = acq::SignalGenerator::create(c, kBlock);
  if (!generator) {
    results.note_error("kernel.sim.noise", generator.error().what);
    return;
  }
  std::vector<float> ring(std::size_t{kDistinctBlocks} * kBlock), source(kBlock);
  const auto block_at = [&ring](std::uint64_t i) { return ring.data() + (i % kDistinctBlocks) * kBlock; };
  const auto noise = [&](std::uint64_t i) noexcept {
    generator->fill(std::span<float>(block_at(i), kBlock));
    return true;
  };
  const Paired set = measure_paired(
      config,
      [&](std::uint64_t i) noexcept {
        std::memset(block_at(i), static_cast<int>(i & 0x3F), opaque(std::size_t{kBlock} * sizeof(float)));
        keep(*block_at(i));
        return true;
      },
      noise);
  add_per_sample(results, "kernel.sim.noise.f32", "base.memset.f32", set, kBlock);
  const Paired copy = measure_paired(
      config,
      [&](std::uint64_t i) noexcept {
        std::memcpy(block_at(i), source.data(), opaque(std::size_t{kBlock} * sizeof(float)));
        keep(*block_at(i));
        return true;
      },
      noise);
  add_per_sample(results, "kernel.sim.noise.f32.vs_memcpy", "base.memcpy.f32", copy, kBlock);
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
  filter_case(config, results, blocks);
  noise_case(config, results);
  char title[160];
  std::snprintf(title, sizeof title,
                "weir bench kernels: ns per sample, median/min/max of %d repetitions, each paired with its floor%s",
                config.reps, config.quick ? " (--quick)" : "");
  print_report(results.rows(), Fields{}, config.json, title);
  return exit_status(results);
}

}  // namespace weir::bench

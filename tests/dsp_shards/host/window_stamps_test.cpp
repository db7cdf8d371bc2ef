// The fft shard run by a real ShardInstance on a real arena, with real FFTW: every spectrum is
// stamped with the acquisition time of its window's first input sample (taken from the block that
// holds it, whose stamps here are deliberately irregular), no spectrum spans an input gap the
// writer published, and at stop the shard flushes a partial spectrum that ends at the last sample.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#include "host_test_util.hpp"
#include "live_arena.hpp"
#include "weir/core/arena_layout.hpp"
#include "weir/core/gap_reason.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/shard_host/shard_instance.hpp"

namespace {

using namespace weir;
using namespace weir::shard_host;

constexpr std::uint32_t kBlock = 200;  // not a multiple of the hop: frames start inside blocks
constexpr double kRate = 51200;        // with N = 512: 100 Hz bins
constexpr std::uint32_t kN = 512;
constexpr std::uint32_t kHop = 256;    // overlap 0.5
constexpr std::uint32_t kBins = kN / 2 + 1;
constexpr std::uint64_t kEpoch = 1'800'000'000'000'000'000ULL;

struct Rig {
  LoadedShard shard;
  std::unique_ptr<ResolvedParams> params;
  std::unique_ptr<ShardInstance> instance;
  Watchdog dog{0, {}};
};

void start(Rig& rig, const core::Arena& arena, const std::string& kind, const std::vector<ParamArg>& params) {
  auto shard = load_shard(kind);
  REQUIRE(shard);
  rig.shard = std::move(*shard);
  auto resolved = resolve_params(rig.shard.api(), rig.shard.what(), params);
  REQUIRE_MESSAGE(resolved, (resolved ? "" : resolved.error().what));
  rig.params = std::move(*resolved);
  InstanceSpec spec;
  spec.instance = "t.in";
  spec.input = "in";
  spec.policy = core::ConsumerPolicy::lossless;
  auto instance = ShardInstance::create(arena, rig.shard, *rig.params, spec);
  REQUIRE_MESSAGE(instance, (instance ? "" : instance.error().what));
  rig.instance = std::move(*instance);
}

// Block b's stamp: nominal period plus an irregular offset of up to 9.99 us, so a stamp
// extrapolated from any other block would differ.
std::uint64_t block_time(std::uint64_t b) {
  const auto period = static_cast<std::uint64_t>(std::llround(kBlock * 1e9 / kRate));
  return kEpoch + b * period + (b * 7919U) % 9990U;
}

// The time of stream sample i when block b holds samples [b * kBlock, (b + 1) * kBlock) and the
// stream's blocks are numbered from `block0` at sample `sample0`.
std::uint64_t sample_time(std::uint64_t i, std::uint64_t sample0 = 0, std::uint64_t block0 = 0) {
  const std::uint64_t b = (i - sample0) / kBlock;
  const double offset = static_cast<double>((i - sample0) % kBlock);
  return block_time(block0 + b) + static_cast<std::uint64_t>(std::llround(offset * 1e9 / kRate));
}

// Publishes blocks [from, to) of a sine of `cycles_per_frame` cycles per N samples, amplitude 1,
// stamped block_time(b + stamp_shift).
void publish_sine(core::ChannelWriter& w, std::uint64_t from, std::uint64_t to, double cycles_per_frame,
                  std::uint64_t stamp_shift = 0) {
  for (std::uint64_t b = from; b < to; ++b) {
    std::span<std::byte> block;
    REQUIRE(w.claim(block) == core::ClaimStatus::ok);
    for (std::uint32_t j = 0; j < kBlock; ++j) {
      const double t = static_cast<double>(b * kBlock + j);
      const auto v = static_cast<float>(std::sin(2 * std::numbers::pi * cycles_per_frame * t / kN));
      std::memcpy(block.data() + j * sizeof(float), &v, sizeof v);
    }
    w.publish(kBlock, block_time(b + stamp_shift), 1 + b);
  }
}

struct Spectrum {
  std::uint64_t realtime_ns = 0;
  std::uint32_t flags = 0;
  std::vector<float> bins;
};

std::vector<Spectrum> spectra(const core::Arena& arena, const std::string& channel) {
  auto reader = core::ChannelReader::open(arena, channel, core::ConsumerPolicy::lossy, "check", core::StartAt::oldest);
  REQUIRE(reader);
  std::vector<Spectrum> out;
  for (;;) {
    core::BlockView view;
    std::uint64_t lost = 0;
    const core::NextStatus st = reader->next(view, lost);
    if (st == core::NextStatus::empty) break;
    REQUIRE(st == core::NextStatus::ok);  // the test's ring holds every spectrum
    Spectrum s{view.realtime_ns, view.flags, std::vector<float>(view.samples)};
    std::memcpy(s.bins.data(), view.data, view.samples * sizeof(float));
    REQUIRE(reader->done(view));
    out.push_back(std::move(s));
  }
  return out;
}

double f64_key(const core::Arena& arena, const std::string& key) {
  core::KvStore kv(arena);
  std::uint64_t bits = 0;
  core::ValueType type = core::ValueType::none;
  REQUIRE_MESSAGE(kv.get_scalar(key, bits, type) == core::KvStatus::ok, key);
  REQUIRE(type == core::ValueType::f64);
  return std::bit_cast<double>(bits);
}

std::uint64_t u64_key(const core::Arena& arena, const std::string& key) {
  core::KvStore kv(arena);
  std::uint64_t bits = 0;
  core::ValueType type = core::ValueType::none;
  REQUIRE_MESSAGE(kv.get_scalar(key, bits, type) == core::KvStatus::ok, key);
  REQUIRE(type == core::ValueType::u64);
  return bits;
}

std::size_t peak_bin(const std::vector<float>& bins) {
  std::size_t best = 0;
  for (std::size_t k = 1; k < bins.size(); ++k)
    if (bins[k] > bins[best]) best = k;
  return best;
}

}  // namespace

TEST_SUITE("shard_host.window_stamps") {

TEST_CASE("each fft spectrum is stamped with its window's first input sample, and at stop the partial one ends at "
          "the last sample") {
  constexpr std::uint64_t kBlocks = 30;  // 6000 samples
  constexpr std::uint64_t kTotal = kBlocks * kBlock;
  struct Mode {
    const char* average;
    std::uint64_t frames_per_window;  // linear: averages; 1 otherwise
  };
  for (const Mode mode : {Mode{"none", 1}, Mode{"linear", 3}, Mode{"exponential", 1}}) {
    CAPTURE(mode.average);
    test::ScratchArena scratch("stamps");
    const core::Arena& arena = scratch.arena();
    test::make_channel(arena, "in", core::Dtype::f32, kBlock, kRate);
    Rig rig;
    start(rig, arena, "fft",
          {{"size", "512"}, {"overlap", "0.5"}, {"average", mode.average}, {"averages", "3"}, {"alpha", "0.5"},
           {"wisdom", "off"}, {"plan", "estimate"}});
    auto writer = core::ChannelWriter::open(arena, "in");
    REQUIRE(writer);
    publish_sine(*writer, 0, kBlocks, 20);
    REQUIRE(rig.instance->poll(64, rig.dog, 0) == kBlocks);
    const InstanceReport report = rig.instance->finish();
    CHECK(report.errors == 0);

    const std::vector<Spectrum> got = spectra(arena, "in.psd");
    // Full frames start at 0, 256, ..., 5376 (22 of them); then one frame of the last 512 samples.
    const std::uint64_t frames = (kTotal - kN) / kHop + 1;
    const std::uint64_t full = frames / mode.frames_per_window;
    const bool unfinished = frames % mode.frames_per_window != 0;
    REQUIRE(got.size() == full + 1);
    for (std::uint64_t k = 0; k < full; ++k) {
      CAPTURE(k);
      CHECK(got[k].realtime_ns == sample_time(k * mode.frames_per_window * kHop));
      CHECK((got[k].flags & core::kBlockPartialFlag) == 0);
      CHECK(got[k].bins.size() == kBins);
      CHECK(peak_bin(got[k].bins) == 20);
    }
    const Spectrum& last = got.back();
    CHECK((last.flags & core::kBlockPartialFlag) != 0);
    CHECK(peak_bin(last.bins) == 20);
    // linear: the unfinished window starts at its first frame; otherwise the last frame is the last
    // N samples, so it ends at the last sample.
    const std::uint64_t last_first = mode.frames_per_window > 1 && unfinished
                                         ? full * mode.frames_per_window * kHop
                                         : kTotal - kN;
    CHECK(last.realtime_ns == sample_time(last_first));
    // A reader finds the full window's length next to the channel.
    const double window_s = f64_key(arena, "in.psd.window_s");
    CHECK(window_s == doctest::Approx(static_cast<double>((mode.frames_per_window - 1) * kHop + kN) / kRate));
    CHECK(u64_key(arena, "in.psd.dropped_samples") == 0);
  }
}

TEST_CASE("no fft spectrum spans a gap the writer published, and the one before it is flushed as partial") {
  // A sine of 20 cycles per frame before the gap, of 60 after; the gap is 3 blocks the source lost
  // (skip: no samples, the sample index continues, the stamps jump).
  test::ScratchArena scratch("stamps");
  const core::Arena& arena = scratch.arena();
  test::make_channel(arena, "in", core::Dtype::f32, kBlock, kRate);
  Rig rig;
  start(rig, arena, "fft", {{"size", "512"}, {"overlap", "0.5"}, {"average", "linear"}, {"averages", "2"},
                            {"wisdom", "off"}, {"plan", "estimate"}});
  auto writer = core::ChannelWriter::open(arena, "in");
  REQUIRE(writer);
  constexpr std::uint64_t kBefore = 13, kGap = 3, kAfter = 12;  // 2600 samples, then 2400
  publish_sine(*writer, 0, kBefore, 20);
  writer->skip(kGap, core::GapReason::source_loss);
  // Blocks after the gap: stream samples from kBefore * kBlock on, stamped as blocks kBefore + kGap...
  for (std::uint64_t b = 0; b < kAfter; ++b) {
    std::span<std::byte> block;
    REQUIRE(writer->claim(block) == core::ClaimStatus::ok);
    for (std::uint32_t j = 0; j < kBlock; ++j) {
      const auto v = static_cast<float>(std::sin(2 * std::numbers::pi * 60 * static_cast<double>(b * kBlock + j) / kN));
      std::memcpy(block.data() + j * sizeof(float), &v, sizeof v);
    }
    writer->publish(kBlock, block_time(kBefore + kGap + b), 1);
  }
  (void)rig.instance->poll(64, rig.dog, 0);
  const InstanceReport report = rig.instance->finish();
  CHECK(report.blocks_lost == kGap);
  CHECK(report.errors == 0);

  const std::uint64_t after0 = kBefore * kBlock;  // stream index of the first sample after the gap
  const auto after_time = [&](std::uint64_t i) { return sample_time(i, after0, kBefore + kGap); };
  const std::vector<Spectrum> got = spectra(arena, "in.psd");
  // Before: frames at 0 .. 2048 (9), 4 windows of 2 + 1 frame and a last-N frame: partial.
  // After: frames at 0 .. 1792 of the new run (8), 4 windows; the last-N frame: partial.
  REQUIRE(got.size() == 5 + 5);
  for (std::size_t k = 0; k < got.size(); ++k) {
    CAPTURE(k);
    const bool before = k < 5;
    const std::vector<float>& bins = got[k].bins;
    const std::size_t own = before ? 20 : 60, other = before ? 60 : 20;
    CHECK(peak_bin(bins) == own);
    // Nothing of the other side: its line would stand far above the Hann leakage this far away.
    CHECK(bins[other] < bins[own] * 1e-9F);
    const bool partial = k == 4 || k == 9;
    CHECK(((got[k].flags & core::kBlockPartialFlag) != 0) == partial);
    if (before) {
      CHECK(got[k].realtime_ns == sample_time(k * 2 * kHop));
    } else {
      if (k < 9) CHECK(got[k].realtime_ns == after_time(after0 + (k - 5) * 2 * kHop));
      CHECK(got[k].realtime_ns >= block_time(kBefore + kGap));
    }
  }
  // The partial before the gap: frame 8 (at 2048) and the last N samples before it; it ends at the
  // gap. The one at stop: the last N samples of the run after it.
  CHECK(got[4].realtime_ns == sample_time(8 * kHop));
  CHECK(got[9].realtime_ns == after_time(after0 + kAfter * kBlock - kN));
}

TEST_CASE("fewer than N samples before a gap make no spectrum and are counted") {
  test::ScratchArena scratch("stamps");
  const core::Arena& arena = scratch.arena();
  test::make_channel(arena, "in", core::Dtype::f32, kBlock, kRate);
  Rig rig;
  start(rig, arena, "fft", {{"size", "512"}, {"wisdom", "off"}, {"plan", "estimate"}});
  auto writer = core::ChannelWriter::open(arena, "in");
  REQUIRE(writer);
  publish_sine(*writer, 0, 2, 20);  // 400 samples
  writer->skip(1, core::GapReason::source_loss);
  publish_sine(*writer, 3, 6, 20);  // 600 samples: one frame, then the last N at stop
  (void)rig.instance->poll(64, rig.dog, 0);
  (void)rig.instance->finish();
  const std::vector<Spectrum> got = spectra(arena, "in.psd");
  REQUIRE(got.size() == 2);
  CHECK((got[0].flags & core::kBlockPartialFlag) == 0);
  CHECK((got[1].flags & core::kBlockPartialFlag) != 0);
  CHECK(got[0].realtime_ns == block_time(3));
  CHECK(got[1].realtime_ns == sample_time(400 + 600 - kN, 400, 3));
  CHECK(u64_key(arena, "in.psd.dropped_samples") == 400);
}

}  // TEST_SUITE

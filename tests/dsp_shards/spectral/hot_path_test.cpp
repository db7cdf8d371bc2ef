#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "alloc_counter.hpp"
#include "dsp_test_support.hpp"
#include "weir/dsp/biquad.hpp"
#include "weir/dsp/dc_blocker.hpp"
#include "weir/dsp/decimator.hpp"
#include "weir/dsp/fir_design.hpp"
#include "weir/dsp/fir_filter.hpp"
#include "weir/dsp/spectral_shards.hpp"
#include "weir/dsp/spectrum_estimator.hpp"
#include "weir/shard_fake_host.hpp"

namespace {

constexpr double kRate = 48000;

// A host that only counts: publishing into vectors would allocate, which is the host's business.
struct CountingHost {
  std::vector<float> buffer;
  std::uint64_t published = 0;
  weir_shard_host table() {
    weir_shard_host host{};
    host.self = this;
    host.claim = [](void* self, uint32_t, uint32_t* capacity) -> void* {
      auto* h = static_cast<CountingHost*>(self);
      *capacity = static_cast<uint32_t>(h->buffer.size());
      return h->buffer.data();
    };
    host.publish = [](void* self, uint32_t, uint32_t, uint64_t, uint32_t) {
      ++static_cast<CountingHost*>(self)->published;
    };
    host.set_key = [](void*, uint32_t, const void*, size_t) { return 0; };
    return host;
  }
};

}  // namespace

TEST_SUITE("dsp.hot_path") {

TEST_CASE("spectrum estimation allocates nothing after create, FFTW execute included") {
  if (!weir::test::counting_allocations()) {
    MESSAGE("sanitizer build: allocations are not counted");
    return;
  }
  const auto x = weir::test::noise(kRate, 1.0, 40000, 31);
  // Sizes FFTW solves differently: a power of two, and mixed radices up to the largest allowed
  // prime (sizes with larger primes are refused: FFTW would allocate per execute).
  for (const std::uint32_t size : {1024U, 1000U, 2U * 7U * 11U * 13U}) {
    for (const auto averaging : {weir::dsp::Averaging::none, weir::dsp::Averaging::linear,
                                 weir::dsp::Averaging::exponential}) {
      CAPTURE(size);
      auto config = weir::test::spectrum_config(size, kRate);
      config.effort = weir::dsp::PlanEffort::measure;
      config.averaging = averaging;
      config.averages = 3;
      config.overlap = 0.5;
      config.output = weir::dsp::SpectrumOutput::psd;
      config.db = true;
      auto estimator = weir::dsp::SpectrumEstimator::create(config);
      REQUIRE(estimator);
      float checksum = 0;
      std::uint32_t spectra = 0;
      {
        const weir::test::AllocationProbe probe;
        for (std::size_t at = 0; at + 500 <= x.size(); at += 500)
          spectra += estimator->process(std::span<const float>(x).subspan(at, 500),
                                        [&](std::span<const float> s) noexcept { checksum += s[1]; });
        CHECK(probe.count() == 0);
      }
      CHECK(spectra > 0);
    }
  }
}

TEST_CASE("filters and the decimator allocate nothing per block") {
  if (!weir::test::counting_allocations()) return;
  auto x = weir::test::noise(kRate, 1.0, 4800, 37);
  std::vector<float> y(x.size());
  weir::dsp::FirSpec spec;
  spec.sample_rate_hz = kRate;
  spec.cutoff_hz = 5000;
  auto fir = weir::dsp::FirFilter::create(weir::dsp::design_fir(spec).value());
  auto biquad = weir::dsp::BiquadCascade::create(
      {weir::dsp::design_biquad(weir::dsp::BiquadType::notch, 1000, 3, kRate).value()});
  auto dc = weir::dsp::DcBlocker::create(5, kRate);
  auto decimator = weir::dsp::Decimator::create_antialias(8, kRate);
  REQUIRE(fir);
  REQUIRE(biquad);
  REQUIRE(dc);
  REQUIRE(decimator);
  const weir::test::AllocationProbe probe;
  for (std::size_t at = 0; at < x.size(); at += 480) {
    const std::span<float> in(x.data() + at, 480);
    const std::span<float> out(y.data() + at, 480);
    fir->process(in, out);
    biquad->process(out, out);
    dc->process(out, out);
    (void)decimator->process(out, out);
  }
  CHECK(probe.count() == 0);
}

TEST_CASE("the fft and filter shards allocate nothing in process") {
  if (!weir::test::counting_allocations()) return;
  std::vector<std::int32_t> samples(1200);
  const auto x = weir::test::noise(kRate, 1000.0, samples.size(), 41);
  for (std::size_t i = 0; i < samples.size(); ++i) samples[i] = static_cast<std::int32_t>(x[i]);
  weir_shard_block in{};
  in.samples = samples.data();
  in.count = static_cast<std::uint32_t>(samples.size());

  struct Kind {
    const weir_shard_api* api;
    std::vector<std::pair<std::string, std::string>> params;
  };
  const Kind kinds[] = {
      {weir_builtin_fft(WEIR_SHARD_ABI_VERSION),
       {{"size", "512"}, {"wisdom", "off"}, {"average", "exponential"}, {"db", "true"}}},
      {weir_builtin_filter(WEIR_SHARD_ABI_VERSION), {{"type", "bandpass"}, {"cutoff", "1000"},
                                                     {"cutoff_high", "4000"}, {"decimate", "4"}}},
      {weir_builtin_filter(WEIR_SHARD_ABI_VERSION), {{"type", "biquad-lowpass"}, {"cutoff", "1000"}}},
  };
  for (const Kind& kind : kinds) {
    CAPTURE(kind.api->name);
    weir::shard_test::ShardConfig b("adc0", WEIR_DTYPE_I32, in.count, kRate, "V");
    for (const auto& [name, value] : kind.params) b.param(name, value);
    auto& cfg = b.build();
    const auto configured = weir::shard_test::configure(*kind.api, cfg);
    REQUIRE_MESSAGE(configured.shard != nullptr, configured.error);
    CountingHost host{std::vector<float>(cfg.outputs[0].samples_per_block)};
    const weir_shard_host table = host.table();
    {
      const weir::test::AllocationProbe probe;
      for (int i = 0; i < 8; ++i) CHECK(kind.api->process(configured.shard, &in, &table) == 0);
      // A gap (the partial result first, then afresh) and the flush at stop allocate nothing either.
      weir_shard_block after_gap = in;
      after_gap.flags = WEIR_SHARD_AFTER_GAP;
      CHECK(kind.api->process(configured.shard, &after_gap, &table) == 0);
      if (kind.api->flush != nullptr) CHECK(kind.api->flush(configured.shard, &table) == 0);
      CHECK(probe.count() == 0);
    }
    CHECK(host.published > 0);
    kind.api->stop(configured.shard);
  }
}

}  // TEST_SUITE

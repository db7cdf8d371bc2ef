// The embed shard without a host: the built plugin, opened here, configured and driven through the
// fake host (weir/shard_fake_host.hpp) on buffers of simulated pulses. Skips, saying so, where the
// plugin or the model was not built.
#include <doctest/doctest.h>
#include <dlfcn.h>

#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "pulse_sim.hpp"
#include "weir/shard.h"
#include "weir/shard_fake_host.hpp"

namespace {

using weir::shard_test::FakeHost;
using weir::shard_test::ShardConfig;

constexpr std::uint32_t kDims = 32;
constexpr double kRate = 1e6;
constexpr std::uint64_t kStartNs = 5'000'000'000ULL;

// The plugin's table, or NULL (said) when it was not built. The handle stays open for the run.
const weir_shard_api* embed_api() {
  if (!std::filesystem::exists(WEIR_EMBED_PLUGIN) || !std::filesystem::exists(WEIR_EMBED_MODEL)) {
    MESSAGE("SKIPPED: the embed plugin or its model was not built (needs libtorch-dev and python3-torch)");
    return nullptr;
  }
  static void* handle = dlopen(WEIR_EMBED_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  REQUIRE_MESSAGE(handle != nullptr, dlerror());
  const auto entry = reinterpret_cast<weir_shard_entry_fn>(dlsym(handle, WEIR_SHARD_ENTRY_SYMBOL));
  REQUIRE((entry != nullptr));
  CHECK(entry(WEIR_SHARD_ABI_VERSION - 1) == nullptr);  // it needs vector rings
  const weir_shard_api* api = entry(WEIR_SHARD_ABI_VERSION);
  REQUIRE(api != nullptr);
  return api;
}

weir_shard_block block_of(const std::vector<float>& samples, std::uint64_t sequence, std::uint64_t first_sample,
                          std::uint64_t realtime_ns) {
  return weir_shard_block{samples.data(), static_cast<std::uint32_t>(samples.size()), 0, sequence, realtime_ns, 0,
                          first_sample};
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double dot = 0, na = 0, nb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    dot += double{a[i]} * b[i];
    na += double{a[i]} * a[i];
    nb += double{b[i]} * b[i];
  }
  return dot / std::sqrt(na * nb);
}

}  // namespace

TEST_SUITE("embed.unit") {

TEST_CASE("pulses are embedded in batches, held ones at idle, into the ring with their metadata") {
  const weir_shard_api* api = embed_api();
  if (api == nullptr) return;
  CHECK(std::string(api->name) == "embed");
  CHECK((api->idle != nullptr));
  CHECK((api->flush != nullptr));
  ShardConfig config("det.events", WEIR_DTYPE_F32, weir::test::kPulseLength, kRate, "V");
  config.param("batch", "4").param("capacity", "6").input_frames(weir::test::kPulseLength).arena_vector_dim(kDims);
  auto [shard, error] = weir::shard_test::configure(*api, config.build());
  REQUIRE_MESSAGE(shard != nullptr, error);
  const weir_shard_config& cfg = config.config();
  REQUIRE(cfg.output_count == 3);
  CHECK(std::string(cfg.outputs[0].name) == "pulses/det.events");
  CHECK(cfg.outputs[0].kind == WEIR_OUTPUT_VECTORS);
  CHECK(std::string(cfg.outputs[0].labels) == "pulses");
  CHECK(cfg.outputs[0].capacity == 6);
  CHECK(cfg.outputs[0].array_dims[0] == kDims);
  CHECK(std::string(cfg.outputs[1].name) == "det.events.embedded");
  CHECK(std::string(cfg.outputs[2].name) == "det.events.embed_dropped");

  FakeHost host(cfg);
  const weir_shard_host table = host.table();
  std::mt19937_64 rng(11);
  std::vector<std::vector<float>> pulses;
  for (int n = 0; n < 10; ++n) pulses.push_back(weir::test::simulate_pulse(n % 2 == 0 ? 0 : 1, rng));
  for (std::uint64_t n = 0; n < 10; ++n) {
    const auto b = block_of(pulses[n], n, n * 1000, kStartNs + n * 777);
    CHECK(api->process(shard, &b, &table) == 0);
    CHECK(host.vectors.size() == n / 4 * 4);  // a full batch of 4 runs on the next call, once its blocks are known intact
  }
  CHECK(api->idle(shard, &table, 0) == 0);  // the input ran dry: the two held pulses go now
  REQUIRE(host.vectors.size() == 10);
  CHECK(api->idle(shard, &table, 0) == 0);  // nothing held: nothing written
  CHECK(host.vectors.size() == 10);
  for (std::uint64_t n = 0; n < 10; ++n) {
    const auto& v = host.vectors[n];
    CHECK(v.ring_index == n % 6);
    CHECK(v.meta.realtime_ns == kStartNs + n * 777);
    CHECK(v.meta.sequence == n);
    CHECK(v.meta.frame == 0);
    CHECK(v.meta.first_sample == n * 1000);
    CHECK(v.vector.size() == kDims);
  }
  // Same class (fast exponentials at even n) lie closer than the other class (slow exponentials).
  CHECK(cosine(host.vectors[0].vector, host.vectors[2].vector) > cosine(host.vectors[0].vector, host.vectors[1].vector));
  CHECK(host.u64(1) == 10);  // <base>.embedded
  CHECK(host.u64(2) == 0);   // <base>.embed_dropped
  CHECK(host.misuse == 0);
  api->stop(shard);
}

TEST_CASE("a plain channel's block is cut into windows stamped at their first sample and a partial window is dropped") {
  const weir_shard_api* api = embed_api();
  if (api == nullptr) return;
  ShardConfig config("adc0", WEIR_DTYPE_F32, 4 * weir::test::kPulseLength, kRate, "V");
  config.param("batch", "16").arena_vector_dim(kDims);
  auto [shard, error] = weir::shard_test::configure(*api, config.build());
  REQUIRE_MESSAGE(shard != nullptr, error);
  FakeHost host(config.config());
  const weir_shard_host table = host.table();
  std::mt19937_64 rng(3);
  std::vector<float> samples;
  for (int w = 0; w < 4; ++w) {
    const auto pulse = weir::test::simulate_pulse(w, rng);
    samples.insert(samples.end(), pulse.begin(), pulse.end());
  }
  samples.resize(samples.size() - 10);  // a short block: its last window is partial
  const auto b = block_of(samples, 7, 40'000, kStartNs);
  CHECK(api->process(shard, &b, &table) == 0);
  CHECK(api->flush(shard, &table) == 0);  // at stop, the held windows go
  REQUIRE(host.vectors.size() == 3);
  for (std::uint64_t w = 0; w < 3; ++w) {
    CHECK(host.vectors[w].meta.frame == w);
    CHECK(host.vectors[w].meta.sequence == 7);
    CHECK(host.vectors[w].meta.first_sample == 40'000 + w * weir::test::kPulseLength);
    CHECK(host.vectors[w].meta.realtime_ns == kStartNs + w * weir::test::kPulseLength * 1000);  // 1 µs a sample
  }
  CHECK(host.u64(1) == 3);
  CHECK(host.u64(2) == 1);
  CHECK(host.misuse == 0);
  api->stop(shard);
}

TEST_CASE("failed vector writes are counted as dropped, and the ring moves on") {
  const weir_shard_api* api = embed_api();
  if (api == nullptr) return;
  ShardConfig config("det.events", WEIR_DTYPE_F32, weir::test::kPulseLength, kRate, "V");
  config.param("batch", "1").param("capacity", "4").input_frames(weir::test::kPulseLength).arena_vector_dim(kDims);
  auto [shard, error] = weir::shard_test::configure(*api, config.build());
  REQUIRE_MESSAGE(shard != nullptr, error);
  FakeHost host(config.config());
  const weir_shard_host table = host.table();
  std::mt19937_64 rng(5);
  const auto pulse = weir::test::simulate_pulse(2, rng);
  host.vectors_busy = true;
  const auto b0 = block_of(pulse, 0, 0, kStartNs);
  CHECK(api->process(shard, &b0, &table) == 0);
  const auto b1 = block_of(pulse, 1, 256, kStartNs);
  CHECK(api->process(shard, &b1, &table) == 0);  // b0's window runs here, and its put fails
  host.vectors_busy = false;
  CHECK(api->idle(shard, &table, 0) == 0);
  REQUIRE(host.vectors.size() == 1);
  CHECK(host.vectors[0].ring_index == 1);
  CHECK(host.u64(1) == 1);
  CHECK(host.u64(2) == 1);
  api->stop(shard);
}

TEST_CASE("the windows of a block the host says was torn are never embedded") {
  const weir_shard_api* api = embed_api();
  if (api == nullptr) return;
  ShardConfig config("det.events", WEIR_DTYPE_F32, weir::test::kPulseLength, kRate, "V");
  config.param("batch", "2").input_frames(weir::test::kPulseLength).arena_vector_dim(kDims);
  auto [shard, error] = weir::shard_test::configure(*api, config.build());
  REQUIRE_MESSAGE(shard != nullptr, error);
  FakeHost host(config.config());
  const weir_shard_host table = host.table();
  std::mt19937_64 rng(9);
  const auto pulse = weir::test::simulate_pulse(3, rng);
  const auto block = [&](std::uint64_t n, std::uint32_t flags) {
    auto b = block_of(pulse, n, n * 256, kStartNs);
    b.flags = flags;
    return b;
  };
  const auto b0 = block(0, 0), b1 = block(1, 0), b2 = block(2, WEIR_SHARD_PREV_TORN), b3 = block(3, 0);
  CHECK(api->process(shard, &b0, &table) == 0);
  CHECK(api->process(shard, &b1, &table) == 0);
  CHECK(api->process(shard, &b2, &table) == 0);  // b1 was torn: dropped before the batch of 2 runs
  CHECK(host.vectors.empty());
  CHECK(api->process(shard, &b3, &table) == 0);  // b0 and b2 make the batch
  REQUIRE(host.vectors.size() == 2);
  CHECK(host.vectors[0].meta.sequence == 0);
  CHECK(host.vectors[1].meta.sequence == 2);
  CHECK(api->idle(shard, &table, WEIR_SHARD_PREV_TORN) == 0);  // b3 was torn too
  CHECK(host.vectors.size() == 2);
  CHECK(host.u64(1) == 2);  // embedded
  CHECK(host.u64(2) == 0);  // dropped counts intact windows without a vector only
  api->stop(shard);
}

TEST_CASE("configure refuses a model file that does not load, naming it") {
  const weir_shard_api* api = embed_api();
  if (api == nullptr) return;
  ShardConfig config("det.events", WEIR_DTYPE_F32, weir::test::kPulseLength, kRate, "V");
  config.param("model", "/nonexistent/model.pt").param("input_length", "256").arena_vector_dim(kDims);
  auto [shard, error] = weir::shard_test::configure(*api, config.build());
  CHECK(shard == nullptr);
  CHECK(error.find("embed: cannot load the model '/nonexistent/model.pt'") == 0);
}

}  // TEST_SUITE

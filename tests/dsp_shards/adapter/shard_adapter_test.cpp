// A toy shard written with the adapter, driven through its C table and the fake host.
#include <doctest/doctest.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "weir/dsp/sample_convert.hpp"
#include "weir/dsp/shard_adapter.hpp"
#include "weir/dsp/shard_params.hpp"
#include "weir/shard_fake_host.hpp"

namespace {

using weir::dsp::ParamProblem;
using weir::dsp::ParamReader;

std::string wording(const ParamProblem& p) {
  switch (p.kind) {
    case ParamProblem::Kind::required: return std::string(p.name) + " required";
    case ParamProblem::Kind::not_integer: return std::string(p.name) + " not an integer: " + std::string(p.value);
    case ParamProblem::Kind::not_number: return std::string(p.name) + " not a number: " + std::string(p.value);
    case ParamProblem::Kind::not_boolean: return std::string(p.name) + " not a boolean: " + std::string(p.value);
    case ParamProblem::Kind::not_choice: return std::string(p.name) + " not a choice: " + std::string(p.value);
    case ParamProblem::Kind::out_of_range: return std::string(p.name) + " out of range: " + std::string(p.value);
  }
  return "?";
}

// Scales every sample by k into output 0; mode=throw makes configure throw.
struct GainShard {
  static constexpr const char* kKind = "gain";
  static constexpr const char* kDescription = "multiplies every sample by k";
  static constexpr weir_shard_param kParams[] = {
      {"k", WEIR_PARAM_REAL, 0, "1", -100, 100, nullptr, "factor"},
      {"mode", WEIR_PARAM_TEXT, 0, "ok", 0, 0, "ok|throw", "test switch"},
      {"taps", WEIR_PARAM_INT, 0, "3", 1, 9, nullptr, "unused"},
      {"fast", WEIR_PARAM_BOOL, 0, "false", 0, 0, nullptr, "unused"},
  };
  static constexpr std::uint32_t kInputDtypes = weir::dsp::kRealDtypes;

  static weir::core::Result<std::unique_ptr<GainShard>> configure(weir_shard_config& cfg) {
    const ParamReader params(kParams, cfg, wording);
    if (auto ok = params.check_names(); !ok) return tl::make_unexpected(ok.error());
    auto k = params.real("k");
    if (!k) return tl::make_unexpected(k.error());
    auto mode = params.text("mode");
    if (!mode) return tl::make_unexpected(mode.error());
    if (*mode == "throw") throw std::runtime_error("boom");
    auto taps = params.integer("taps");
    if (!taps) return tl::make_unexpected(taps.error());
    auto fast = params.boolean("fast");
    if (!fast) return tl::make_unexpected(fast.error());
    weir_shard_output& out = cfg.outputs[0];
    out = weir_shard_output{};
    REQUIRE(weir::dsp::put_text(out.name, "adc0.gain"));
    out.kind = WEIR_OUTPUT_CHANNEL;
    out.dtype = WEIR_DTYPE_F32;
    out.samples_per_block = cfg.input_samples_per_block;
    cfg.output_count = 1;
    auto shard = std::make_unique<GainShard>();
    shard->k = *k;
    shard->dtype = static_cast<weir::core::Dtype>(cfg.input_dtype);
    return shard;
  }

  int process(const weir_shard_block& in, const weir_shard_host& host) noexcept {
    std::uint32_t capacity = 0;
    auto* out = static_cast<float*>(host.claim(host.self, 0, &capacity));
    if (out == nullptr) return 0;
    weir::dsp::to_float(dtype, in.samples, 0, std::span<float>(out, std::min(capacity, in.count)));
    for (std::uint32_t i = 0; i < std::min(capacity, in.count); ++i) out[i] *= static_cast<float>(k);
    host.publish(host.self, 0, std::min(capacity, in.count), in.realtime_ns, 0);
    return 0;
  }

  double k = 1;
  weir::core::Dtype dtype = weir::core::Dtype::f32;
};

const weir_shard_api& api() {
  const weir_shard_api* table = weir::dsp::shard_entry<GainShard>(WEIR_SHARD_ABI_VERSION);
  REQUIRE(table != nullptr);
  return *table;
}

std::string refusal(weir::shard_test::ShardConfig& b) {
  const auto configured = weir::shard_test::configure(api(), b.build());
  CHECK(configured.shard == nullptr);
  CHECK(b.config().output_count == 0);
  return configured.error;
}

}  // namespace

TEST_SUITE("dsp.adapter.shard_adapter") {

TEST_CASE("the table carries the class's kind, description, parameters and dtypes") {
  const weir_shard_api& t = api();
  CHECK(t.abi_version == WEIR_SHARD_ABI_VERSION);
  CHECK(t.struct_size == sizeof(weir_shard_api));
  CHECK(std::string(t.name) == "gain");
  CHECK(std::string(t.description) == "multiplies every sample by k");
  CHECK(t.params == GainShard::kParams);
  CHECK(t.param_count == 4);
  CHECK(t.input_dtypes == weir::dsp::real_dtype_mask());
  CHECK((t.input_dtypes & (1U << WEIR_DTYPE_C64)) == 0);
  CHECK(weir::dsp::shard_entry<GainShard>(WEIR_SHARD_ABI_VERSION + 1) == nullptr);
}

TEST_CASE("a configured shard processes blocks through the fake host") {
  weir::shard_test::ShardConfig b("adc0", WEIR_DTYPE_I16, 4, 100.0, "V", {{"k", "2.5"}});
  const auto configured = weir::shard_test::configure(api(), b.build());
  REQUIRE_MESSAGE(configured.shard != nullptr, configured.error);
  weir::shard_test::FakeHost host(b.config());
  const weir_shard_host table = host.table();
  const std::int16_t samples[4] = {1, -2, 3, 400};
  const weir_shard_block in{samples, 4, 0, 0, 77, 0, 0};
  CHECK(api().process(configured.shard, &in, &table) == 0);
  REQUIRE(host.published.size() == 1);
  CHECK(host.published[0].samples == std::vector<float>{2.5F, -5.0F, 7.5F, 1000.0F});
  CHECK(host.published[0].realtime_ns == 77);
  CHECK(host.misuse == 0);
  CHECK(api().process(configured.shard, nullptr, &table) == -1);
  CHECK(api().process(configured.shard, &in, nullptr) == -1);
  const weir_shard_block empty_samples{nullptr, 4, 0, 0, 0, 0, 0};
  CHECK(api().process(configured.shard, &empty_samples, &table) == -1);
  api().stop(configured.shard);
}

TEST_CASE("refusals, exceptions and a missing config become messages naming the kind") {
  weir::shard_test::ShardConfig b("adc0", WEIR_DTYPE_F32, 4, 100.0, "V");
  SUBCASE("out of range") { CHECK(refusal(b.param("k", "1000")) == "gain: k out of range: 1000"); }
  SUBCASE("not a number") { CHECK(refusal(b.param("k", "ten")) == "gain: k not a number: ten"); }
  SUBCASE("not an integer") { CHECK(refusal(b.param("taps", "2.5")) == "gain: taps not an integer: 2.5"); }
  SUBCASE("not a boolean") { CHECK(refusal(b.param("fast", "maybe")) == "gain: fast not a boolean: maybe"); }
  SUBCASE("not a choice") { CHECK(refusal(b.param("mode", "loud")) == "gain: mode not a choice: loud"); }
  SUBCASE("unknown name") {
    CHECK(refusal(b.param("kk", "1")) == "gain: unknown parameter 'kk': known are k, mode, taps, fast");
  }
  SUBCASE("an exception") { CHECK(refusal(b.param("mode", "throw")) == "gain: configure failed: boom"); }
  SUBCASE("no config") {
    char error[64] = {};
    CHECK(api().configure(nullptr, error, sizeof error) == nullptr);
    CHECK(std::string(error) == "gain: no configuration given");
  }
}

TEST_CASE("write_error truncates to the buffer and always terminates") {
  char error[8];
  weir::dsp::write_error(error, sizeof error, "kind", "a long message");
  CHECK(std::string(error) == "kind: a");
  weir::dsp::write_error(error, sizeof error, "", "message");
  CHECK(std::string(error) == "message");
  weir::dsp::write_error(nullptr, 0, "kind", "nothing");
}

}  // TEST_SUITE

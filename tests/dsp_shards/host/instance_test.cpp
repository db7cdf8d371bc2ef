// One shard instance in-process: the test writes the input channel itself and drives poll(), then
// checks outputs, keys and the counters the instance keeps in its consumer row.
#include <doctest/doctest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "host_test_util.hpp"
#include "live_arena.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/shard_host/shard_instance.hpp"

namespace {

using namespace weir;
using namespace weir::shard_host;
using test::contains;

constexpr std::uint32_t kBlock = 64;
constexpr double kRate = 6400;

// A loaded shard, its resolved parameters and the instance made from them, in destruction order.
struct Rig {
  LoadedShard shard;
  std::unique_ptr<ResolvedParams> params;
  std::unique_ptr<ShardInstance> instance;
  Watchdog dog{0, {}};
};

core::Result<std::unique_ptr<ShardInstance>> make(Rig& rig, const core::Arena& arena, const std::string& kind,
                                                  const std::vector<ParamArg>& params, InstanceSpec spec) {
  auto shard = load_shard(kind);
  REQUIRE(shard);
  rig.shard = std::move(*shard);
  auto resolved = resolve_params(rig.shard.api(), rig.shard.what(), params);
  REQUIRE(resolved);
  rig.params = std::move(*resolved);
  return ShardInstance::create(arena, rig.shard, *rig.params, spec);
}

void start(Rig& rig, const core::Arena& arena, const std::string& kind, const std::vector<ParamArg>& params,
           InstanceSpec spec) {
  auto instance = make(rig, arena, kind, params, std::move(spec));
  REQUIRE_MESSAGE(instance, (instance ? "" : instance.error().what));
  rig.instance = std::move(*instance);
}

InstanceSpec spec_for(const std::string& input, core::ConsumerPolicy policy = core::ConsumerPolicy::lossy) {
  InstanceSpec s;
  s.instance = "t." + input;
  s.input = input;
  s.policy = policy;
  return s;
}

// Publishes n f32 blocks whose sample j of block b is b * 1000 + j.
void publish_f32(core::ChannelWriter& w, std::uint32_t n, std::uint32_t first = 0) {
  for (std::uint32_t b = first; b < first + n; ++b) {
    std::span<std::byte> block;
    REQUIRE(w.claim(block) == core::ClaimStatus::ok);
    for (std::uint32_t j = 0; j < kBlock; ++j) {
      const auto v = static_cast<float>(b * 1000 + j);
      std::memcpy(block.data() + j * sizeof(float), &v, sizeof v);
    }
    w.publish(kBlock, 1'000'000 + b);
  }
}

}  // namespace

TEST_SUITE("shard_host.instance") {

TEST_CASE("copy republishes every block in place and keeps its counters in the consumer row") {
  test::ScratchArena scratch("shardinst");
  const core::Arena& arena = scratch.arena();
  test::make_channel(arena, "in", core::Dtype::f32, kBlock, kRate, 16);
  Rig rig;
  start(rig, arena, "copy", {}, spec_for("in"));
  auto writer = core::ChannelWriter::open(arena, "in");
  REQUIRE(writer);
  publish_f32(*writer, 10);
  CHECK(rig.instance->poll(64, rig.dog, 0) == 10);
  CHECK(rig.instance->poll(64, rig.dog, 0) == 0);

  const auto row = test::consumer_info(arena, "in", "t.in");
  REQUIRE(row);
  CHECK(row->kind == "shard:copy");
  CHECK(row->alive);
  CHECK(row->blocks_read == 10);
  CHECK(row->blocks_out == 10);
  CHECK(row->errors == 0);
  CHECK(row->blocks_lost == 0);
  CHECK(row->proc_p50_ns > 0);
  CHECK(row->proc_p99_ns >= row->proc_p50_ns);

  const auto in = test::ring_blocks(arena, "in");
  const auto out = test::ring_blocks(arena, "in.copy");
  REQUIRE(in.size() == 10);
  REQUIRE(out.size() == 10);
  for (std::size_t i = 0; i < in.size(); ++i) {
    CHECK(out[i].bytes == in[i].bytes);
    CHECK(out[i].realtime_ns == in[i].realtime_ns);
  }
  const auto out_info = test::channel_info(arena, "in.copy");
  REQUIRE(out_info);
  CHECK(out_info->dtype == core::Dtype::f32);
  CHECK(out_info->rate_hz == kRate);
  CHECK(out_info->writer_pid == static_cast<std::uint32_t>(getpid()));

  const InstanceReport r = rig.instance->finish();
  CHECK(r.blocks_in == 10);
  CHECK(r.blocks_out == 10);
  CHECK(r.outputs == std::vector<std::string>{"in.copy"});
  CHECK(r.p50_ns > 0);
  CHECK_FALSE(test::consumer_info(arena, "in", "t.in"));       // left the consumer table
  CHECK(test::channel_info(arena, "in.copy")->writer_pid == 0);  // gave up the output
}

TEST_CASE("an input dtype the shard does not accept is refused, naming dtype, channel and what it accepts") {
  test::ScratchArena scratch("shardinst");
  test::make_channel(scratch.arena(), "adc", core::Dtype::i16, kBlock, kRate);
  Rig rig;
  auto r = make(rig, scratch.arena(), test::test_shard("faulty"), {{"at", "1"}}, spec_for("adc"));
  REQUIRE_FALSE(r);
  CHECK(contains(r.error().what, "libweir_test_shard_faulty.so"));
  CHECK(contains(r.error().what, "input channel 'adc' carries i16 samples, which the shard does not accept "
                                 "(it accepts f32)"));
  CHECK(test::channel_info(scratch.arena(), "adc")->consumers.empty());
}

TEST_CASE("key outputs are written through handles and counted as output") {
  test::ScratchArena scratch("shardinst");
  const core::Arena& arena = scratch.arena();
  test::make_channel(arena, "in", core::Dtype::f32, kBlock, kRate);
  Rig rig;
  start(rig, arena, test::test_shard("faulty"), {{"at", "1000"}}, spec_for("in"));
  auto writer = core::ChannelWriter::open(arena, "in");
  REQUIRE(writer);
  publish_f32(*writer, 7);
  CHECK(rig.instance->poll(64, rig.dog, 0) == 7);
  core::KvStore kv(arena);
  std::uint64_t bits = 0;
  core::ValueType type = core::ValueType::none;
  REQUIRE(kv.get_scalar("in.seen", bits, type) == core::KvStatus::ok);
  CHECK(type == core::ValueType::u64);
  CHECK(bits == 7);
  CHECK(test::consumer_info(arena, "in", "t.in")->blocks_out == 7);
}

TEST_CASE("a framed output becomes a frame channel with its axis, an array key a typed array") {
  test::ScratchArena scratch("shardinst");
  const core::Arena& arena = scratch.arena();
  test::make_channel(arena, "in", core::Dtype::f32, kBlock, kRate);
  Rig fft;
  start(fft, arena, "fft", {{"size", "64"}, {"overlap", "0"}, {"wisdom", "off"}, {"plan", "estimate"}},
        spec_for("in"));
  const auto psd = test::channel_info(arena, "in.psd");
  REQUIRE(psd);
  CHECK(psd->samples_per_block == 33);
  CHECK(psd->frame.framed());
  CHECK(psd->frame.frames_per_block == 1);
  CHECK(psd->frame.frame_elements == 33);
  CHECK(psd->frame.axis.name == "frequency");
  CHECK(psd->frame.axis.units == "Hz");
  CHECK(psd->frame.axis.start == 0.0);
  CHECK(psd->frame.axis.step == kRate / 64);

  Rig mca;
  InstanceSpec mca_spec = spec_for("in");
  mca_spec.instance = "m.in";
  start(mca, arena, "mca", {{"bins", "16"}, {"range", "1.6"}}, mca_spec);
  auto writer = core::ChannelWriter::open(arena, "in");
  REQUIRE(writer);
  publish_f32(*writer, 2);
  CHECK(mca.instance->poll(64, mca.dog, 0) == 2);
  core::KvStore kv(arena);
  std::vector<std::byte> bytes(kv.value_bytes());
  core::ValueInfo info{};
  REQUIRE(kv.get("in.spectrum", bytes, info) == core::KvStatus::ok);
  CHECK(info.type == core::ValueType::array);
  CHECK(info.array.elem == core::Dtype::u32);
  CHECK(info.array.rank == 1);
  CHECK(info.array.dims[0] == 16);
  CHECK(info.array.bytes() == 64);
  REQUIRE(kv.get("in.spectrum_axis", bytes, info) == core::KvStatus::ok);
  CHECK(info.array.elem == core::Dtype::f32);
  CHECK(info.array.dims[0] == 16);
  float centre = 0;
  std::memcpy(&centre, bytes.data() + 15 * sizeof(float), sizeof centre);
  CHECK(centre == doctest::Approx(1.55));
  CHECK(test::consumer_info(arena, "in", "m.in")->errors == 0);
}

TEST_CASE("a key output larger than the arena's value slots is refused") {
  test::ScratchArena scratch("shardinst");
  test::make_channel(scratch.arena(), "in", core::Dtype::f32, kBlock, kRate);
  Rig rig;
  auto r = make(rig, scratch.arena(), test::test_shard("faulty"), {{"at", "1"}, {"mode", "bigkey"}}, spec_for("in"));
  REQUIRE_FALSE(r);
  CHECK(contains(r.error().what, "output 'in.seen': the key may hold up to 1073741824 bytes, but the arena's value "
                                 "slots hold 4096"));
  CHECK(test::channel_info(scratch.arena(), "in")->consumers.empty());
}

TEST_CASE("failed blocks count as errors and declined blocks as skipped") {
  test::ScratchArena scratch("shardinst");
  const core::Arena& arena = scratch.arena();
  test::make_channel(arena, "a", core::Dtype::f32, kBlock, kRate);
  test::make_channel(arena, "b", core::Dtype::f32, kBlock, kRate);
  Rig failing, skipping;
  start(failing, arena, test::test_shard("faulty"), {{"at", "3"}, {"mode", "fail"}}, spec_for("a"));
  start(skipping, arena, test::test_shard("faulty"), {{"at", "3"}, {"mode", "skip"}}, spec_for("b"));
  auto wa = core::ChannelWriter::open(arena, "a");
  auto wb = core::ChannelWriter::open(arena, "b");
  REQUIRE((wa && wb));
  publish_f32(*wa, 5);
  publish_f32(*wb, 5);
  CHECK(failing.instance->poll(64, failing.dog, 0) == 5);
  CHECK(skipping.instance->poll(64, skipping.dog, 0) == 5);
  const InstanceReport f = failing.instance->finish();
  const InstanceReport s = skipping.instance->finish();
  CHECK(f.errors == 3);
  CHECK(f.blocks_skipped == 0);
  CHECK(s.errors == 0);
  CHECK(s.blocks_skipped == 3);
  CHECK(f.blocks_in == 5);
  CHECK(s.blocks_in == 5);
}

TEST_CASE("a latest consumer handles the newest block and counts the ones it jumped as skipped") {
  test::ScratchArena scratch("shardinst");
  const core::Arena& arena = scratch.arena();
  test::make_channel(arena, "in", core::Dtype::f32, kBlock, kRate);
  Rig rig;
  start(rig, arena, "null", {}, spec_for("in", core::ConsumerPolicy::latest));
  auto writer = core::ChannelWriter::open(arena, "in");
  REQUIRE(writer);
  publish_f32(*writer, 10);
  CHECK(rig.instance->poll(64, rig.dog, 0) == 1);
  const InstanceReport r = rig.instance->finish();
  CHECK(r.blocks_in == 1);
  CHECK(r.blocks_skipped == 9);
  CHECK(r.blocks_lost == 0);
}

TEST_CASE("a lossy consumer lapped by the writer counts exactly the blocks it lost") {
  test::ScratchArena scratch("shardinst");
  const core::Arena& arena = scratch.arena();
  test::make_channel(arena, "in", core::Dtype::f32, kBlock, kRate, 8);
  Rig rig;
  start(rig, arena, "null", {}, spec_for("in"));
  auto writer = core::ChannelWriter::open(arena, "in");
  REQUIRE(writer);
  publish_f32(*writer, 20);
  (void)rig.instance->poll(64, rig.dog, 0);
  const InstanceReport r = rig.instance->finish();
  CHECK(r.blocks_lost == 12);
  CHECK(r.blocks_in == 8);
  CHECK(r.blocks_in + r.blocks_lost == 20);
}

TEST_CASE("a block overwritten while process() reads it counts as lost, and its outputs do not count") {
  test::ScratchArena scratch("shardinst");
  const core::Arena& arena = scratch.arena();
  test::make_channel(arena, "in", core::Dtype::f32, kBlock, kRate, 4);
  {
    auto writer = core::ChannelWriter::open(arena, "in");
    REQUIRE(writer);
    publish_f32(*writer, 1);
  }  // the shard becomes the input's writer itself and laps its own reader on its first block
  Rig rig;
  InstanceSpec spec = spec_for("in");
  spec.start = core::StartAt::oldest;
  start(rig, arena, test::test_shard("faulty"), {{"at", "1"}, {"mode", "lap"}}, spec);
  CHECK(rig.instance->poll(1, rig.dog, 0) == 1);
  const auto row = test::consumer_info(arena, "in", "t.in");
  REQUIRE(row);
  CHECK(row->blocks_lost == 1);
  CHECK(row->blocks_read == 0);
  CHECK(row->blocks_out == 0);
}

TEST_CASE("outputs that clash with the arena are refused: another dtype, another live writer") {
  test::ScratchArena scratch("shardinst");
  const core::Arena& arena = scratch.arena();
  test::make_channel(arena, "in", core::Dtype::f32, kBlock, kRate);
  test::make_channel(arena, "in.copy", core::Dtype::i16, kBlock, kRate);
  test::make_channel(arena, "in.held", core::Dtype::f32, kBlock, kRate);
  Rig rig;
  auto other_dtype = make(rig, arena, "copy", {}, spec_for("in"));
  REQUIRE_FALSE(other_dtype);
  CHECK(contains(other_dtype.error().what, "shard 'copy' (instance 't.in'): output 'in.copy': the channel exists "
                                           "with i16 x 64 per block, but the shard declares f32 x 64"));
  auto holder = core::ChannelWriter::open(arena, "in.held");
  REQUIRE(holder);
  Rig rig2;
  auto held = make(rig2, arena, "copy", {{"suffix", "held"}}, spec_for("in"));
  REQUIRE_FALSE(held);
  CHECK(contains(held.error().what, "output 'in.held'"));
  CHECK(contains(held.error().what, "already has a writer"));
  CHECK(test::channel_info(arena, "in")->consumers.empty());
}

TEST_CASE("a configure refusal is reported with the shard's own text") {
  test::ScratchArena scratch("shardinst");
  test::make_channel(scratch.arena(), "in", core::Dtype::f32, kBlock, kRate);
  Rig rig;
  auto r = make(rig, scratch.arena(), "copy", {{"suffix", std::string(70, 'x')}}, spec_for("in"));
  REQUIRE_FALSE(r);
  CHECK(contains(r.error().what, "shard 'copy' (instance 't.in'): configure refused on channel 'in': output 'in.xxx"));
  CHECK(contains(r.error().what, "too long"));
}

}  // TEST_SUITE

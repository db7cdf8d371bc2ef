// `weir udpgen --signal pulses`: detector pulses as integer ADC codes with a chosen baseline noise in
// LSB, received by `weir udp` over loopback exactly as sent (every published block equal to the
// generator's own reference, dropped packets' gaps leaving the later samples in place), and the
// noise the codes carry is the noise asked for.
#include <doctest/doctest.h>

#include <signal.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "background_weir.hpp"
#include "json.hpp"
#include "live_arena.hpp"
#include "run_weir.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/udp/generator.hpp"

using namespace weir;
using weir::test::BackgroundWeir;
using weir::test::run_weir;

namespace {

constexpr auto kReady = std::chrono::seconds(20);
constexpr std::uint32_t kSamples = 256;  // a packet's and a block's
constexpr std::uint64_t kPackets = 300;
constexpr double kRateHz = 1e6;

std::uint64_t bound_port(const core::Arena& arena) {
  core::KvStore kv(arena);
  std::uint64_t bits = 0;
  core::ValueType type{};
  if (kv.get_scalar("udp.port", bits, type) != core::KvStatus::ok) return 0;
  return bits;
}

acq::UdpGenOptions pulses(core::Dtype dtype, double noise_lsb) {
  acq::UdpGenOptions o;
  o.port = 1;
  o.dtype = dtype;
  o.signal = acq::UdpGenSignal::pulses;
  o.noise_lsb = noise_lsb;
  o.rate_hz = kRateHz;
  o.packet_samples = kSamples;
  o.packets = kPackets;
  o.seed = 5;
  return o;
}

void receive_exactly(const std::string& format) {
  test::ScratchArena scratch("udpp");
  BackgroundWeir rx({"udp", scratch.name(), "--format", format, "--stream", "1=adc0", "--dtype", "i16", "--rate",
                     "1000000", "--block", std::to_string(kSamples), "--ring", "1024", "--json"});
  REQUIRE(test::eventually([&] { return bound_port(scratch.arena()) != 0; },
                           std::chrono::duration_cast<std::chrono::milliseconds>(kReady)));
  const auto gen = run_weir({"udpgen", "--port", std::to_string(bound_port(scratch.arena())), "--format", format,
                             "--signal", "pulses", "--noise-lsb", "3", "--rate", "1000000", "--samples",
                             std::to_string(kSamples), "--packets", std::to_string(kPackets), "--drop-every", "9",
                             "--reorder", "0.05", "--seed", "5", "--json"});
  REQUIRE_MESSAGE(gen.exit_code == 0, gen.err);
  const auto sent = test::parse_json(gen.out);
  REQUIRE(rx.signal(SIGINT));
  REQUIRE(rx.wait_exit(std::chrono::seconds(30)) == 0);
  const auto got = test::parse_json(rx.output());
  REQUIRE_MESSAGE(got.is_object(), rx.output());
  if (got["kernel_drops"].get<std::uint64_t>() != 0 || sent["send_errors"].get<std::uint64_t>() != 0) {
    MESSAGE("skipped: the kernel dropped datagrams on loopback: the blocks cannot all be compared");
    return;
  }
  auto expected = acq::udpgen_pulses(pulses(core::Dtype::i16, 3), 1, kPackets * kSamples);
  REQUIRE_MESSAGE(expected, (expected ? "" : expected.error().what));
  auto reader = core::ChannelReader::open(scratch.arena(), "adc0", core::ConsumerPolicy::lossy, "udp-test", core::StartAt::oldest);
  REQUIRE(reader);
  std::uint64_t blocks = 0, lost = 0, wrong = 0;
  for (;;) {
    core::BlockView view;
    std::uint64_t n = 0;
    const core::NextStatus status = reader->next(view, n);
    if (status == core::NextStatus::empty) break;
    if (status == core::NextStatus::lost) {
      lost += n;
      continue;
    }
    REQUIRE(view.samples == kSamples);
    REQUIRE(view.sequence < kPackets);
    if (std::memcmp(view.data, expected->data() + view.sequence * kSamples * 2, kSamples * 2) != 0) ++wrong;
    REQUIRE(reader->done(view));
    ++blocks;
  }
  CHECK(wrong == 0);
  CHECK(lost == sent["packets_dropped"]);
  CHECK(blocks == kPackets - sent["packets_dropped"].get<std::uint64_t>());
  CHECK(blocks > kPackets / 2);
}

}  // namespace

TEST_SUITE("acquisition.udp.pulses") {

TEST_CASE("weir udp receives exactly the detector pulses weir udpgen sends") {
  SUBCASE("VITA 49") { receive_exactly("vita49"); }
  SUBCASE("raw") { receive_exactly("raw"); }
}

TEST_CASE("udpgen's pulses carry the baseline noise asked for, in LSB of the dtype") {
  for (const core::Dtype dtype : {core::Dtype::i16, core::Dtype::u16, core::Dtype::i32}) {
    for (const double lsb : {1.0, 4.0, 10.0}) {
      CAPTURE(lsb);
      auto o = pulses(dtype, lsb);
      o.count_rate_hz = 1e-3;  // no pulse in 0.1 s: the baseline alone
      auto codes = acq::udpgen_pulses(o, 1, 100'000);
      REQUIRE(codes);
      const std::size_t one = dtype == core::Dtype::i32 ? 4 : 2;
      double sum = 0, sum2 = 0;
      const std::size_t n = codes->size() / one;
      for (std::size_t i = 0; i < n; ++i) {
        double v = 0;
        if (dtype == core::Dtype::i16) {
          std::int16_t x = 0;
          std::memcpy(&x, codes->data() + i * one, one);
          v = x;
        } else if (dtype == core::Dtype::u16) {
          std::uint16_t x = 0;
          std::memcpy(&x, codes->data() + i * one, one);
          v = x;
        } else {
          std::int32_t x = 0;
          std::memcpy(&x, codes->data() + i * one, one);
          v = x;
        }
        sum += v;
        sum2 += v * v;
      }
      const double mean = sum / static_cast<double>(n);
      const double sigma = std::sqrt(sum2 / static_cast<double>(n) - mean * mean);
      const double want = std::sqrt(lsb * lsb + 1.0 / 12);  // the gaussian and the rounding to codes
      CHECK(sigma == doctest::Approx(want).epsilon(0.05));
    }
  }
}

TEST_CASE("udpgen refuses pulses in a float dtype and a negative noise, naming them") {
  auto o = pulses(core::Dtype::f32, 3);
  auto ok = acq::validate(o);
  REQUIRE_FALSE(ok);
  CHECK(ok.error().what.find("integer dtype") != std::string::npos);
  o = pulses(core::Dtype::i16, -1);
  ok = acq::validate(o);
  REQUIRE_FALSE(ok);
  CHECK(ok.error().what.find("noise") != std::string::npos);
  const auto r = run_weir({"udpgen", "--port", "9", "--rate", "1000", "--samples", "64", "--packets", "1", "--signal", "sawtooth"});
  CHECK(r.exit_code == test::kExitUsage);
  CHECK(r.err.find("sawtooth") != std::string::npos);
}

}  // TEST_SUITE

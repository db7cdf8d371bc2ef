#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "weir/dsp/shard_outputs.hpp"

using weir::dsp::OutputAxis;

namespace {

weir_shard_output channel(std::uint32_t samples_per_block) {
  weir_shard_output out{};
  std::strcpy(out.name, "adc0.psd");
  out.kind = WEIR_OUTPUT_CHANNEL;
  out.dtype = WEIR_DTYPE_F32;
  out.rate_hz = 1000;
  out.samples_per_block = samples_per_block;
  return out;
}

weir_shard_output key() {
  weir_shard_output out{};
  std::strcpy(out.name, "adc0.spectrum");
  out.kind = WEIR_OUTPUT_KEY;
  out.key_type = WEIR_KEY_BYTES;
  return out;
}

bool same(const weir_shard_output& a, const weir_shard_output& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

TEST_SUITE("dsp.adapter.shard_outputs") {

TEST_CASE("set_frames gives a channel its frame size and axis") {
  weir_shard_output out = channel(2 * 513);
  REQUIRE(weir::dsp::set_frames(out, 513, OutputAxis{"frequency", "Hz", 0.0, 50.0}));
  CHECK(out.frame_elements == 513);
  CHECK(std::string(out.axis.name) == "frequency");
  CHECK(std::string(out.axis.units) == "Hz");
  CHECK(out.axis.start == 0.0);
  CHECK(out.axis.step == 50.0);
  CHECK(out.samples_per_block == 2 * 513);  // the block is untouched
}

TEST_CASE("set_frames refuses what a frame channel cannot be, leaving the output untouched") {
  const weir_shard_output before = channel(1000);
  weir_shard_output out = before;
  const auto refused = [&](std::uint32_t elements, const OutputAxis& axis) {
    auto r = weir::dsp::set_frames(out, elements, axis);
    REQUIRE_FALSE(r);
    CHECK(same(out, before));
    return r.error().what;
  };
  CHECK(refused(0, {"time", "s"}).find("not a whole number of 0-element frames") != std::string::npos);
  CHECK(refused(300, {"time", "s"}).find("1000 samples per block are not a whole number of 300") != std::string::npos);
  CHECK(refused(100, {"time", "s", std::numeric_limits<double>::quiet_NaN(), 1}).find("finite") != std::string::npos);
  CHECK(refused(100, {"time", "s", 0, std::numeric_limits<double>::infinity()}).find("finite") != std::string::npos);
  CHECK(refused(100, {std::string(32, 'n'), "s"}).find("longer than 31 bytes") != std::string::npos);
  CHECK(refused(100, {"time", std::string(40, 'u')}).find("longer than 31 bytes") != std::string::npos);
  weir_shard_output k = key();
  auto r = weir::dsp::set_frames(k, 1, {"time", "s"});
  REQUIRE_FALSE(r);
  CHECK(r.error().what == "output 'adc0.spectrum': only a channel holds frames");
}

TEST_CASE("set_array makes a key a typed array of rank 1 or 2 and sizes it") {
  weir_shard_output out = key();
  const std::uint32_t one[] = {1024};
  REQUIRE(weir::dsp::set_array(out, WEIR_DTYPE_U32, one));
  CHECK(out.key_type == WEIR_KEY_ARRAY);
  CHECK(out.array_dtype == WEIR_DTYPE_U32);
  CHECK(out.array_rank == 1);
  CHECK(out.array_dims[0] == 1024);
  CHECK(out.array_dims[1] == 0);
  CHECK(out.max_bytes == 4096);

  const std::uint32_t two[] = {3, 5};
  REQUIRE(weir::dsp::set_array(out, WEIR_DTYPE_F64, two));
  CHECK(out.array_rank == 2);
  CHECK(out.array_dims[0] == 3);
  CHECK(out.array_dims[1] == 5);
  CHECK(out.max_bytes == 3 * 5 * 8);
}

TEST_CASE("set_array refuses channels, unknown dtypes, other ranks and empty dimensions") {
  const weir_shard_output before = key();
  weir_shard_output out = before;
  const std::uint32_t dims[] = {4, 0, 2};
  CHECK(weir::dsp::set_array(out, 99, std::span(dims, 1)).error().what.find("unknown array element dtype 99") !=
        std::string::npos);
  CHECK(weir::dsp::set_array(out, WEIR_DTYPE_U8, std::span(dims, 3)).error().what.find("rank 1 or 2, not 3") !=
        std::string::npos);
  CHECK(weir::dsp::set_array(out, WEIR_DTYPE_U8, std::span<const std::uint32_t>()).error().what.find("not 0") !=
        std::string::npos);
  CHECK(weir::dsp::set_array(out, WEIR_DTYPE_U8, std::span(dims, 2)).error().what.find("dimension is 0") !=
        std::string::npos);
  CHECK(same(out, before));
  weir_shard_output c = channel(10);
  CHECK(weir::dsp::set_array(c, WEIR_DTYPE_U8, std::span(dims, 1)).error().what.find("only a key") !=
        std::string::npos);
  CHECK(weir::dsp::abi_dtype_bytes(WEIR_DTYPE_I16) == 2);
  CHECK(weir::dsp::abi_dtype_bytes(WEIR_DTYPE_C64) == 8);
  CHECK(weir::dsp::abi_dtype_bytes(0) == 0);
}

}  // TEST_SUITE

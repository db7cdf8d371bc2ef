// se00 both ways against flatc's generated code: weir's encoder read by the generated accessors,
// and a message built with the generated builders read by weir's decoder, for every dtype se00 carries.
#include <doctest/doctest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "weir/core/channel.hpp"
#include "weir/kafka/codec.hpp"
#include "wire_se00.hpp"

namespace weir::test {

namespace {

namespace w = kafka::wire::se00;
using core::Dtype;

std::span<const std::byte> as_span(const flatbuffers::FlatBufferBuilder& b) {
  return std::as_bytes(std::span(b.GetBufferPointer(), b.GetSize()));
}

}  // namespace

TEST_SUITE("kafka.codec") {

TEST_CASE("an se00 message weir encodes reads back field by field with the generated code") {
  std::vector<std::int16_t> samples(1000);
  std::iota(samples.begin(), samples.end(), std::int16_t{-500});
  kafka::SampleBlock block;
  block.name = "adc0";
  block.counter = 123456789012;
  block.packet_timestamp_ns = 1'700'000'000'123'456'789;
  block.time_delta_ns = 1e9 / 1e6;
  block.dtype = Dtype::i16;
  block.samples = static_cast<std::uint32_t>(samples.size());
  block.values = std::as_bytes(std::span(samples));
  kafka::Se00Encoder encoder;
  const std::span<const std::byte> message = encoder.encode(block);
  REQUIRE(kafka::schema_id(message) == "se00");
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(message.data());
  flatbuffers::Verifier verifier(bytes, message.size());
  REQUIRE(w::Verifyse00_SampleEnvironmentDataBuffer(verifier));
  REQUIRE(w::se00_SampleEnvironmentDataBufferHasIdentifier(bytes));
  const w::se00_SampleEnvironmentData& m = *w::Getse00_SampleEnvironmentData(bytes);
  CHECK(m.name()->str() == "adc0");
  CHECK(m.channel() == -1);
  CHECK(m.message_counter() == 123456789012);
  CHECK(m.packet_timestamp() == 1'700'000'000'123'456'789);
  CHECK(m.time_delta() == 1000.0);
  CHECK(m.timestamp_location() == w::Location::Start);
  CHECK(m.timestamps() == nullptr);
  REQUIRE(m.values_type() == w::ValueUnion::Int16Array);
  const auto* values = m.values_as_Int16Array()->value();
  REQUIRE(values->size() == samples.size());
  CHECK(std::equal(values->begin(), values->end(), samples.begin()));

  // The builder is reused: a second, smaller message is whole and independent of the first.
  std::vector<float> two{1.5F, -2.25F};
  block.dtype = Dtype::f32;
  block.samples = 2;
  block.counter = 7;
  block.values = std::as_bytes(std::span(two));
  const auto again = kafka::decode_se00(encoder.encode(block));
  REQUIRE(again);
  CHECK(again->counter == 7);
  CHECK(again->dtype == Dtype::f32);
  REQUIRE(again->samples == 2);
  CHECK(std::memcmp(again->values.data(), two.data(), sizeof(float) * 2) == 0);
}

TEST_CASE("every dtype se00 carries survives weir's encoder and decoder; c64 is refused") {
  for (Dtype d : {Dtype::i8, Dtype::u8, Dtype::i16, Dtype::u16, Dtype::i32, Dtype::u32, Dtype::i64, Dtype::f32, Dtype::f64}) {
    CAPTURE(core::dtype_name(d));
    REQUIRE(kafka::se00_carries(d));
    std::vector<std::byte> raw(std::size_t{64} * core::dtype_bytes(d));
    for (std::size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<std::byte>(i * 37 + 11);
    kafka::SampleBlock block;
    block.name = "ch";
    block.dtype = d;
    block.samples = 64;
    block.values = raw;
    block.counter = 5;
    kafka::Se00Encoder encoder;
    const auto back = kafka::decode_se00(encoder.encode(block));
    REQUIRE(back);
    CHECK(back->dtype == d);
    CHECK(back->samples == 64);
    CHECK(std::memcmp(back->values.data(), raw.data(), raw.size()) == 0);
  }
  CHECK_FALSE(kafka::se00_carries(Dtype::c64));
}

TEST_CASE("weir's decoder reads an se00 message made with the generated builders, and names what it refuses") {
  flatbuffers::FlatBufferBuilder b;
  const std::vector<double> values{0.5, 1.5, 2.5};
  const auto array = w::CreateDoubleArrayDirect(b, &values);
  const auto root = w::Createse00_SampleEnvironmentDataDirect(b, "motor.temp", 3, 42, 250.0, w::Location::Middle,
                                                               w::ValueUnion::DoubleArray, array.Union(), nullptr, 99);
  w::Finishse00_SampleEnvironmentDataBuffer(b, root);
  const auto m = kafka::decode_se00(as_span(b));
  REQUIRE(m);
  CHECK(m->name == "motor.temp");
  CHECK(m->counter == 99);
  CHECK(m->packet_timestamp_ns == 42);
  CHECK(m->time_delta_ns == 250.0);
  CHECK(m->dtype == Dtype::f64);
  REQUIRE(m->samples == 3);
  CHECK(std::memcmp(m->values.data(), values.data(), sizeof(double) * 3) == 0);

  flatbuffers::FlatBufferBuilder u;  // u64 arrays: no weir dtype
  const std::vector<std::uint64_t> big{1, 2};
  const auto ua = w::CreateUInt64ArrayDirect(u, &big);
  w::Finishse00_SampleEnvironmentDataBuffer(
      u, w::Createse00_SampleEnvironmentDataDirect(u, "wide", 0, 0, 1.0, w::Location::Start, w::ValueUnion::UInt64Array,
                                                   ua.Union()));
  const auto refused = kafka::decode_se00(as_span(u));
  REQUIRE_FALSE(refused);
  CHECK(refused.error().what.find("'wide'") != std::string::npos);

  std::vector<std::byte> cut(as_span(b).begin(), as_span(b).end());
  cut.resize(cut.size() / 2);
  const auto truncated = kafka::decode_se00(cut);
  REQUIRE_FALSE(truncated);
  CHECK(truncated.error().what.find("does not verify") != std::string::npos);
}

}  // TEST_SUITE

}  // namespace weir::test

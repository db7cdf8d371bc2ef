// f144 both ways against flatc's generated code: keys' scalars and arrays as weir encodes them, and
// the narrower scalar types the facility's forwarder sends, widened by weir's decoder.
#include <doctest/doctest.h>

#include <bit>
#include <cstring>
#include <vector>

#include "weir/kafka/codec.hpp"
#include "wire_f144.hpp"

namespace weir::test {

namespace {

namespace w = kafka::wire::f144;
using core::ValueType;

const w::f144_LogData& read_generated(std::span<const std::byte> message) {
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(message.data());
  flatbuffers::Verifier verifier(bytes, message.size());
  REQUIRE(w::Verifyf144_LogDataBuffer(verifier));
  REQUIRE(w::f144_LogDataBufferHasIdentifier(bytes));
  return *w::Getf144_LogData(bytes);
}

}  // namespace

TEST_SUITE("kafka.codec") {

TEST_CASE("f144: weir's scalars and arrays read back with the generated code") {
  kafka::F144Encoder encoder;
  kafka::LogValue v;
  v.source = "stage.temperature";
  v.timestamp_ns = 1'700'000'000'000'000'001;
  v.type = ValueType::f64;
  v.bits = std::bit_cast<std::uint64_t>(21.5);
  auto m = encoder.encode(v);
  REQUIRE(m);
  {
    const w::f144_LogData& d = read_generated(*m);
    CHECK(d.source_name()->str() == "stage.temperature");
    CHECK(d.timestamp() == 1'700'000'000'000'000'001);
    REQUIRE(d.value_type() == w::Value::Double);
    CHECK(d.value_as_Double()->value() == 21.5);
  }
  v.type = ValueType::i64;
  v.bits = std::bit_cast<std::uint64_t>(std::int64_t{-42});
  m = encoder.encode(v);
  REQUIRE(m);
  CHECK(read_generated(*m).value_as_Long()->value() == -42);
  v.type = ValueType::u64;
  v.bits = ~std::uint64_t{0};
  m = encoder.encode(v);
  REQUIRE(m);
  CHECK(read_generated(*m).value_as_ULong()->value() == ~std::uint64_t{0});

  const std::vector<float> spectrum{0.25F, 0.5F, 4.0F};
  v.type = ValueType::array;
  v.elem = core::Dtype::f32;
  v.elements = 3;
  v.array = std::as_bytes(std::span(spectrum));
  m = encoder.encode(v);
  REQUIRE(m);
  const auto* array = read_generated(*m).value_as_ArrayFloat();
  REQUIRE(array != nullptr);
  REQUIRE(array->value()->size() == 3);
  CHECK(std::equal(array->value()->begin(), array->value()->end(), spectrum.begin()));
  const auto back = kafka::decode_f144(*m);
  REQUIRE(back);
  CHECK(back->type == ValueType::array);
  CHECK(back->elem == core::Dtype::f32);
  CHECK(back->elements == 3);

  v.type = ValueType::text;
  const auto text = encoder.encode(v);
  REQUIRE_FALSE(text);
  CHECK(text.error().what.find("'stage.temperature'") != std::string::npos);
}

TEST_CASE("f144: the forwarder's narrower scalars come back widened") {
  flatbuffers::FlatBufferBuilder b;
  const auto value = w::CreateShort(b, -7);
  w::Finishf144_LogDataBuffer(b, w::Createf144_LogDataDirect(b, "pv:short", 5, w::Value::Short, value.Union()));
  const auto s = kafka::decode_f144(std::as_bytes(std::span(b.GetBufferPointer(), b.GetSize())));
  REQUIRE(s);
  CHECK(s->source == "pv:short");
  CHECK(s->timestamp_ns == 5);
  CHECK(s->type == ValueType::i64);
  CHECK(std::bit_cast<std::int64_t>(s->bits) == -7);

  b.Clear();
  const auto f = w::CreateFloat(b, 0.75F);
  w::Finishf144_LogDataBuffer(b, w::Createf144_LogDataDirect(b, "pv:float", 6, w::Value::Float, f.Union()));
  const auto d = kafka::decode_f144(std::as_bytes(std::span(b.GetBufferPointer(), b.GetSize())));
  REQUIRE(d);
  CHECK(d->type == ValueType::f64);
  CHECK(std::bit_cast<double>(d->bits) == 0.75);
}

}  // TEST_SUITE

}  // namespace weir::test

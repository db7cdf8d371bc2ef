// hs01 both ways against flatc's generated code: weir's encoder read by the generated accessors
// (every field, the bin boundaries), a message built with the generated builders read by weir's
// decoder, every dtype hs01 carries, and the boundaries of regular and listed axes.
#include <doctest/doctest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "weir/core/channel.hpp"
#include "weir/kafka/codec.hpp"
#include "weir/kafka/codec_frames.hpp"
#include "wire_hs01.hpp"

namespace weir::test {

namespace {

namespace w = kafka::wire::hs01;
using core::Dtype;

std::span<const std::byte> as_span(const flatbuffers::FlatBufferBuilder& b) {
  return std::as_bytes(std::span(b.GetBufferPointer(), b.GetSize()));
}

template <class T>
double read_as(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return static_cast<double>(v);
}

// One element of `dtype` at p as a double (exact for everything but i64 beyond 2^53, not made here).
double number(const std::byte* p, Dtype dtype) {
  switch (dtype) {
    case Dtype::i8: return read_as<std::int8_t>(p);
    case Dtype::u8: return read_as<std::uint8_t>(p);
    case Dtype::i16: return read_as<std::int16_t>(p);
    case Dtype::u16: return read_as<std::uint16_t>(p);
    case Dtype::i32: return read_as<std::int32_t>(p);
    case Dtype::u32: return read_as<std::uint32_t>(p);
    case Dtype::i64: return read_as<std::int64_t>(p);
    case Dtype::f32: return read_as<float>(p);
    case Dtype::f64: return read_as<double>(p);
    case Dtype::c64: break;
  }
  return 0;
}

}  // namespace

TEST_SUITE("kafka.codec") {

TEST_CASE("bin boundaries are halfway between centres, the outer ones half a spacing out") {
  std::vector<double> edges;
  SUBCASE("a regular axis: start + i * step") {
    kafka::bin_boundaries(4, 0.0, 2.5, {}, edges);
    CHECK(edges == std::vector<double>{-1.25, 1.25, 3.75, 6.25, 8.75});
  }
  SUBCASE("listed centres (a values key), irregular") {
    const std::vector<double> centres{1.0, 2.0, 4.0, 8.0};
    kafka::bin_boundaries(4, 0.0, 1.0, centres, edges);
    CHECK(edges == std::vector<double>{0.5, 1.5, 3.0, 6.0, 10.0});
  }
  SUBCASE("a list of the wrong length is not used") {
    const std::vector<double> centres{1.0, 2.0};
    kafka::bin_boundaries(3, 10.0, 1.0, centres, edges);
    CHECK(edges == std::vector<double>{9.5, 10.5, 11.5, 12.5});
  }
  SUBCASE("one bin: half the step either side") {
    kafka::bin_boundaries(1, 5.0, 2.0, {}, edges);
    CHECK(edges == std::vector<double>{4.0, 6.0});
  }
}

TEST_CASE("an hs01 message weir encodes reads back field by field with the generated code") {
  std::vector<float> psd(513);
  for (std::size_t i = 0; i < psd.size(); ++i) psd[i] = static_cast<float>(i) * 0.25F - 3.0F;
  std::vector<double> edges;
  kafka::bin_boundaries(513, 0.0, 1e5 / 1024, {}, edges);
  kafka::HistogramFrame f;
  f.source = "adc0.psd";
  f.timestamp_ns = 1'700'000'000'123'456'789;
  f.metadata_timestamp_ns = 1'700'000'000'000'000'001;
  f.label = "frequency";
  f.unit = "Hz";
  f.info = "V^2/Hz";
  f.bins = 513;
  f.boundaries = edges;
  f.dtype = Dtype::f32;
  f.data = std::as_bytes(std::span(psd));
  kafka::Hs01Encoder encoder;
  const std::span<const std::byte> message = encoder.encode(f);
  REQUIRE(kafka::schema_id(message) == "hs01");
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(message.data());
  flatbuffers::Verifier verifier(bytes, message.size());
  REQUIRE(w::VerifyEventHistogramBuffer(verifier));
  REQUIRE(w::EventHistogramBufferHasIdentifier(bytes));
  const w::EventHistogram& m = *w::GetEventHistogram(bytes);
  CHECK(m.source()->str() == "adc0.psd");
  CHECK(m.timestamp() == 1'700'000'000'123'456'789);
  CHECK(m.last_metadata_timestamp() == 1'700'000'000'000'000'001);
  CHECK(m.info()->str() == "V^2/Hz");
  REQUIRE(m.current_shape()->size() == 1);
  CHECK(m.current_shape()->Get(0) == 513);
  REQUIRE(m.offset() != nullptr);
  REQUIRE(m.offset()->size() == 1);
  CHECK(m.offset()->Get(0) == 0);
  REQUIRE(m.dim_metadata()->size() == 1);
  const w::DimensionMetaData& dim = *m.dim_metadata()->Get(0);
  CHECK(dim.length() == 513);
  CHECK(dim.unit()->str() == "Hz");
  CHECK(dim.label()->str() == "frequency");
  REQUIRE(dim.bin_boundaries_type() == w::Array::ArrayDouble);
  const auto* b = dim.bin_boundaries_as_ArrayDouble()->value();
  REQUIRE(b->size() == 514);
  const double step = 1e5 / 1024;
  for (std::uint32_t i = 0; i <= 513; ++i) CHECK(b->Get(i) == doctest::Approx((i - 0.5) * step).epsilon(1e-12));
  REQUIRE(m.data_type() == w::Array::ArrayFloat);
  const auto* values = m.data_as_ArrayFloat()->value();
  REQUIRE(values->size() == psd.size());
  CHECK(std::equal(values->begin(), values->end(), psd.begin()));
  CHECK(m.errors_type() == w::Array::NONE);

  // The builder is reused: an empty histogram after it is whole and has no dimension or data.
  kafka::HistogramFrame empty;
  empty.source = "adc0.psd";
  empty.timestamp_ns = 5;
  const auto back = kafka::decode_hs01(encoder.encode(empty));
  REQUIRE(back);
  CHECK(back->bins == 0);
  CHECK(back->timestamp_ns == 5);
  CHECK(back->data.empty());
}

TEST_CASE("every dtype hs01 carries survives weir's encoder and decoder, widened to the wire's type") {
  struct Case {
    Dtype dtype, wire;
  };
  for (Case c : {Case{Dtype::i8, Dtype::i32}, {Dtype::u8, Dtype::i32}, {Dtype::i16, Dtype::i32}, {Dtype::u16, Dtype::i32},
                 {Dtype::i32, Dtype::i32}, {Dtype::u32, Dtype::i64}, {Dtype::i64, Dtype::i64}, {Dtype::f32, Dtype::f32},
                 {Dtype::f64, Dtype::f64}}) {
    CAPTURE(core::dtype_name(c.dtype));
    REQUIRE(kafka::hs01_carries(c.dtype));
    CHECK(kafka::hs01_wire_dtype(c.dtype) == c.wire);
    constexpr std::uint32_t kBins = 40;
    std::vector<std::byte> raw(std::size_t{kBins} * core::dtype_bytes(c.dtype));
    for (std::size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<std::byte>(i * 37 + 11);
    std::vector<double> edges;
    kafka::bin_boundaries(kBins, 1.0, 1.0, {}, edges);
    kafka::HistogramFrame f;
    f.source = "h";
    f.bins = kBins;
    f.boundaries = edges;
    f.dtype = c.dtype;
    f.data = raw;
    kafka::Hs01Encoder encoder;
    const auto back = kafka::decode_hs01(encoder.encode(f));
    REQUIRE(back);
    REQUIRE(back->dtype == c.wire);
    REQUIRE(back->bins == kBins);
    CHECK(std::equal(back->boundaries.begin(), back->boundaries.end(), edges.begin(), edges.end()));
    std::uint64_t differ = 0;
    for (std::uint32_t i = 0; i < kBins; ++i) {  // each element compared as a number, wire against source
      const double want = number(raw.data() + std::size_t{i} * core::dtype_bytes(c.dtype), c.dtype);
      const double got = number(back->data.data() + std::size_t{i} * core::dtype_bytes(c.wire), c.wire);
      if (!(got == want || (got != got && want != want))) ++differ;  // NaN bytes stay NaN
    }
    CHECK(differ == 0);
  }
  CHECK_FALSE(kafka::hs01_carries(Dtype::c64));
}

TEST_CASE("weir's decoder reads an hs01 message made with the generated builders, and names what it refuses") {
  const std::vector<double> edges{0.0, 1.0, 2.0, 4.0};
  const std::vector<std::int64_t> counts{7, 0, 3};
  const auto make = [&](flatbuffers::FlatBufferBuilder& b, std::vector<std::int32_t> shape, std::size_t edge_count,
                        std::vector<std::int32_t> offset) {
    const std::vector<double> e(edges.begin(), edges.begin() + static_cast<std::ptrdiff_t>(edge_count));
    const auto boundaries = w::CreateArrayDoubleDirect(b, &e);
    const auto dim = w::CreateDimensionMetaDataDirect(b, 3, "keV", "energy", w::Array::ArrayDouble, boundaries.Union());
    const std::vector<flatbuffers::Offset<w::DimensionMetaData>> dims{dim};
    const auto data = w::CreateArrayLongDirect(b, &counts);
    w::FinishEventHistogramBuffer(b, w::CreateEventHistogramDirect(b, "mca0", 42, &dims, 41, &shape, &offset,
                                                                   w::Array::ArrayLong, data.Union()));
  };
  flatbuffers::FlatBufferBuilder good;
  make(good, {3}, 4, {0});
  const auto m = kafka::decode_hs01(as_span(good));
  REQUIRE(m);
  CHECK(m->source == "mca0");
  CHECK(m->timestamp_ns == 42);
  CHECK(m->metadata_timestamp_ns == 41);
  CHECK(m->label == "energy");
  CHECK(m->unit == "keV");
  REQUIRE(m->bins == 3);
  CHECK(std::equal(m->boundaries.begin(), m->boundaries.end(), edges.begin(), edges.end()));
  CHECK(m->dtype == Dtype::i64);
  REQUIRE(m->data.size() == 3 * sizeof(std::int64_t));
  CHECK(std::memcmp(m->data.data(), counts.data(), m->data.size()) == 0);

  flatbuffers::FlatBufferBuilder two_d;
  make(two_d, {3, 1}, 4, {0, 0});
  const auto rank = kafka::decode_hs01(as_span(two_d));
  REQUIRE_FALSE(rank);
  CHECK(rank.error().what.find("rank 2") != std::string::npos);
  CHECK(rank.error().what.find("'mca0'") != std::string::npos);

  flatbuffers::FlatBufferBuilder short_edges;
  make(short_edges, {3}, 3, {0});
  const auto edges_refused = kafka::decode_hs01(as_span(short_edges));
  REQUIRE_FALSE(edges_refused);
  CHECK(edges_refused.error().what.find("3 bin boundaries for 3 bins") != std::string::npos);

  flatbuffers::FlatBufferBuilder slice;
  make(slice, {3}, 4, {2});
  const auto sliced = kafka::decode_hs01(as_span(slice));
  REQUIRE_FALSE(sliced);
  CHECK(sliced.error().what.find("offset") != std::string::npos);

  std::vector<std::byte> cut(as_span(good).begin(), as_span(good).end());
  cut.resize(cut.size() / 2);
  const auto truncated = kafka::decode_hs01(cut);
  REQUIRE_FALSE(truncated);
  CHECK(truncated.error().what.find("does not verify") != std::string::npos);
  const auto other = kafka::decode_hs01(as_span(good).subspan(0, 4));
  REQUIRE_FALSE(other);
  CHECK(other.error().what.find("not an hs01 message") != std::string::npos);
}

}  // TEST_SUITE

}  // namespace weir::test

// ev44 both ways against flatc's generated code: weir's encoder read by the generated accessors
// (every field; the int32 rule: an event whose time offset or id does not fit is left out and
// counted), a message built with the generated builders read by weir's decoder, and what it refuses.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "weir/core/event_record.hpp"
#include "weir/kafka/codec.hpp"
#include "weir/kafka/codec_frames.hpp"
#include "wire_ev44.hpp"

namespace weir::test {

namespace {

namespace w = kafka::wire::ev44;

std::span<const std::byte> as_span(const flatbuffers::FlatBufferBuilder& b) {
  return std::as_bytes(std::span(b.GetBufferPointer(), b.GetSize()));
}

struct Event {
  double offset_ns, height, id, flags;
};

}  // namespace

TEST_SUITE("kafka.codec") {

TEST_CASE("an ev44 message weir encodes reads back field by field; events outside int32 are left out and counted") {
  constexpr double kMax = std::numeric_limits<std::int32_t>::max();
  constexpr double kMin = std::numeric_limits<std::int32_t>::min();
  const std::vector<Event> events{
      {1000, 0.66, 0, 0},                 // kept
      {-250, 1.17, 2, 1},                 // kept: a pulse begun in an earlier block
      {kMax, 1.33, 1, 0},                 // kept: the largest offset that fits
      {kMax + 1, 0.5, 0, 0},              // left out: 2^31 ns after the stamp
      {kMin, 0.5, 3, 0},                  // kept: the smallest that fits
      {kMin - 1, 0.5, 0, 0},              // left out
      {12.6, 0.1, 7, 0},                  // kept, rounded to 13
      {5, 0.1, 4'294'967'296.0, 0},       // left out: an id beyond int32
      {std::nan(""), 0.1, 0, 0},          // left out
  };
  static_assert(sizeof(Event) == core::kEventFields * sizeof(double));
  kafka::EventBlock block;
  block.source = "det0.events";
  block.message_id = 987654321;
  block.reference_time_ns = 1'700'000'000'000'000'123;
  block.records = std::as_bytes(std::span(events));
  kafka::Ev44Encoder encoder;
  const kafka::Ev44Encoded out = encoder.encode(block);
  CHECK(out.events == 5);
  CHECK(out.dropped == 4);
  REQUIRE(kafka::schema_id(out.message) == "ev44");
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(out.message.data());
  flatbuffers::Verifier verifier(bytes, out.message.size());
  REQUIRE(w::VerifyEvent44MessageBuffer(verifier));
  REQUIRE(w::Event44MessageBufferHasIdentifier(bytes));
  const w::Event44Message& m = *w::GetEvent44Message(bytes);
  CHECK(m.source_name()->str() == "det0.events");
  CHECK(m.message_id() == 987654321);
  REQUIRE(m.reference_time()->size() == 1);
  CHECK(m.reference_time()->Get(0) == 1'700'000'000'000'000'123);
  REQUIRE(m.reference_time_index()->size() == 1);
  CHECK(m.reference_time_index()->Get(0) == 0);
  const std::vector<std::int32_t> tof(m.time_of_flight()->begin(), m.time_of_flight()->end());
  const std::vector<std::int32_t> pixels(m.pixel_id()->begin(), m.pixel_id()->end());
  CHECK(tof == std::vector<std::int32_t>{1000, -250, std::numeric_limits<std::int32_t>::max(),
                                         std::numeric_limits<std::int32_t>::min(), 13});
  CHECK(pixels == std::vector<std::int32_t>{0, 2, 1, 3, 7});

  // A block without events is a pulse without events; a gap carrier has no pulse at all.
  block.records = {};
  block.message_id = 4;
  const auto empty = kafka::decode_ev44(encoder.encode(block).message);
  REQUIRE(empty);
  CHECK(empty->message_id == 4);
  CHECK(empty->reference_time.size() == 1);
  CHECK(empty->time_of_flight.empty());
  block.pulse = false;
  const auto carrier = kafka::decode_ev44(encoder.encode(block).message);
  REQUIRE(carrier);
  CHECK(carrier->reference_time.empty());
  CHECK(carrier->reference_time_index.empty());
  CHECK(carrier->time_of_flight.empty());
}

TEST_CASE("weir's decoder reads an ev44 message made with the generated builders, and names what it refuses") {
  const std::vector<std::int64_t> times{100, 200};
  const std::vector<std::int32_t> index{0, 2};
  const std::vector<std::int32_t> tof{5, 6, 7};
  const std::vector<std::int32_t> pixels{9, 8, 7};
  flatbuffers::FlatBufferBuilder b;
  w::FinishEvent44MessageBuffer(b, w::CreateEvent44MessageDirect(b, "det", 11, &times, &index, &tof, &pixels));
  const auto m = kafka::decode_ev44(as_span(b));
  REQUIRE(m);
  CHECK(m->source == "det");
  CHECK(m->message_id == 11);
  CHECK(std::vector<std::int64_t>(m->reference_time.begin(), m->reference_time.end()) == times);
  CHECK(std::vector<std::int32_t>(m->reference_time_index.begin(), m->reference_time_index.end()) == index);
  CHECK(std::vector<std::int32_t>(m->time_of_flight.begin(), m->time_of_flight.end()) == tof);
  CHECK(std::vector<std::int32_t>(m->pixel_id.begin(), m->pixel_id.end()) == pixels);

  const std::vector<std::int32_t> two{1, 2};
  flatbuffers::FlatBufferBuilder bad_pixels;
  w::FinishEvent44MessageBuffer(bad_pixels,
                                w::CreateEvent44MessageDirect(bad_pixels, "det", 1, &times, &index, &tof, &two));
  const auto pixels_refused = kafka::decode_ev44(as_span(bad_pixels));
  REQUIRE_FALSE(pixels_refused);
  CHECK(pixels_refused.error().what.find("2 pixel ids for 3 events") != std::string::npos);

  const std::vector<std::int32_t> past{0, 4};
  flatbuffers::FlatBufferBuilder bad_index;
  w::FinishEvent44MessageBuffer(bad_index, w::CreateEvent44MessageDirect(bad_index, "det", 1, &times, &past, &tof));
  const auto index_refused = kafka::decode_ev44(as_span(bad_index));
  REQUIRE_FALSE(index_refused);
  CHECK(index_refused.error().what.find("reference_time_index 4") != std::string::npos);

  const std::vector<std::int32_t> one{0};
  flatbuffers::FlatBufferBuilder mismatch;
  w::FinishEvent44MessageBuffer(mismatch, w::CreateEvent44MessageDirect(mismatch, "det", 1, &times, &one, &tof));
  const auto mismatch_refused = kafka::decode_ev44(as_span(mismatch));
  REQUIRE_FALSE(mismatch_refused);
  CHECK(mismatch_refused.error().what.find("2 reference times but 1 indices") != std::string::npos);

  std::vector<std::byte> cut(as_span(b).begin(), as_span(b).end());
  cut.resize(cut.size() / 2);
  const auto truncated = kafka::decode_ev44(cut);
  REQUIRE_FALSE(truncated);
  CHECK(truncated.error().what.find("does not verify") != std::string::npos);
}

}  // TEST_SUITE

}  // namespace weir::test

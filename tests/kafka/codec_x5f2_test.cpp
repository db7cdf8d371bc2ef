// x5f2 both ways against flatc's generated code.
#include <doctest/doctest.h>

#include "weir/kafka/codec.hpp"
#include "wire_x5f2.hpp"

namespace weir::test {

TEST_SUITE("kafka.codec") {

TEST_CASE("x5f2: weir's heartbeat reads back with the generated code and with weir's decoder") {
  kafka::Status s;
  s.software_version = "0.1.0";
  s.service_id = "daq1";
  s.host_name = "box1";
  s.process_id = 4242;
  s.update_interval_ms = 2000;
  s.status_json = R"({"sent":3})";
  kafka::X5f2Encoder encoder;
  const auto message = encoder.encode(s);
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(message.data());
  flatbuffers::Verifier verifier(bytes, message.size());
  REQUIRE(kafka::wire::x5f2::VerifyStatusBuffer(verifier));
  const auto& m = *kafka::wire::x5f2::GetStatus(bytes);
  CHECK(m.software_name()->str() == "weir");
  CHECK(m.service_id()->str() == "daq1");
  CHECK(m.process_id() == 4242);
  CHECK(m.update_interval() == 2000);
  const auto back = kafka::decode_x5f2(message);
  REQUIRE(back);
  CHECK(back->host_name == "box1");
  CHECK(back->status_json == R"({"sent":3})");
  CHECK_FALSE(kafka::decode_x5f2(std::span<const std::byte>()));
}

}  // TEST_SUITE

}  // namespace weir::test

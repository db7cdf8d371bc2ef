// pl72 and 6s4t both ways against flatc's generated code.
#include <doctest/doctest.h>

#include <flatbuffers/flatbuffers.h>

#include "weir/kafka/run_messages.hpp"
#include "wire_6s4t.hpp"
#include "wire_pl72.hpp"

namespace weir::test {

TEST_SUITE("kafka.codec") {

TEST_CASE("pl72: weir's run start reads back with the generated code and with weir's decoder") {
  kafka::RunStart s;
  s.start_time_ms = 1'700'000'000'123;
  s.stop_time_ms = 1'700'000'060'000;
  s.run_name = "run 17";
  s.instrument_name = "bl5";
  s.nexus_structure = R"({"children":[]})";
  s.job_id = "job-a1";
  s.service_id = "writer1";
  s.filename = "run_17.nxs";
  s.metadata = R"({"proposal":"p42"})";
  s.control_topic = "bl5_control";
  const std::vector<std::byte> message = kafka::encode_pl72(s);
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(message.data());
  flatbuffers::Verifier verifier(bytes, message.size());
  REQUIRE(kafka::wire::pl72::VerifyRunStartBuffer(verifier));
  REQUIRE(kafka::wire::pl72::RunStartBufferHasIdentifier(bytes));
  const auto& m = *kafka::wire::pl72::GetRunStart(bytes);
  CHECK(m.start_time() == 1'700'000'000'123ULL);
  CHECK(m.stop_time() == 1'700'000'060'000ULL);
  CHECK(m.run_name()->str() == "run 17");
  CHECK(m.job_id()->str() == "job-a1");
  CHECK(m.filename()->str() == "run_17.nxs");
  CHECK(m.service_id()->str() == "writer1");
  CHECK(m.n_periods() == 1);
  CHECK(m.detector_spectrum_map() == nullptr);
  const auto back = kafka::decode_pl72(message);
  REQUIRE(back);
  CHECK(back->start_time_ms == s.start_time_ms);
  CHECK(back->stop_time_ms == s.stop_time_ms);
  CHECK(back->instrument_name == "bl5");
  CHECK(back->nexus_structure == s.nexus_structure);
  CHECK(back->metadata == s.metadata);
  CHECK(back->control_topic == "bl5_control");
  CHECK(back->broker.empty());
}

TEST_CASE("pl72 made by the generated code alone decodes, a wrong or broken one is refused naming why") {
  flatbuffers::FlatBufferBuilder b;
  namespace w = kafka::wire::pl72;
  w::FinishRunStartBuffer(b, w::CreateRunStartDirect(b, 5, 0, "r", nullptr, nullptr, "j9", nullptr, nullptr, "f.nxs"));
  const auto message = std::as_bytes(std::span(b.GetBufferPointer(), b.GetSize()));
  const auto start = kafka::decode_pl72(message);
  REQUIRE(start);
  CHECK(start->start_time_ms == 5);
  CHECK(start->stop_time_ms == 0);
  CHECK(start->job_id == "j9");
  CHECK(start->filename == "f.nxs");
  CHECK(start->metadata.empty());
  const auto as_stop = kafka::decode_6s4t(message);
  REQUIRE_FALSE(as_stop);
  CHECK(as_stop.error().what.find("not a 6s4t") != std::string::npos);
  std::vector<std::byte> cut(message.begin(), message.begin() + 12);
  const auto broken = kafka::decode_pl72(cut);
  REQUIRE_FALSE(broken);
  CHECK(broken.error().what.find("does not verify") != std::string::npos);
  flatbuffers::FlatBufferBuilder nojob;
  w::FinishRunStartBuffer(nojob, w::CreateRunStartDirect(nojob, 5));
  const auto without = kafka::decode_pl72(std::as_bytes(std::span(nojob.GetBufferPointer(), nojob.GetSize())));
  REQUIRE_FALSE(without);
  CHECK(without.error().what.find("job_id") != std::string::npos);
}

TEST_CASE("6s4t: weir's run stop reads back with the generated code and with weir's decoder") {
  kafka::RunStop s;
  s.stop_time_ms = 1'700'000'030'000;
  s.run_name = "run 17";
  s.job_id = "job-a1";
  s.service_id = "writer1";
  s.command_id = "cmd-7";
  const std::vector<std::byte> message = kafka::encode_6s4t(s);
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(message.data());
  flatbuffers::Verifier verifier(bytes, message.size());
  REQUIRE(kafka::wire::s6s4t::VerifyRunStopBuffer(verifier));
  const auto& m = *kafka::wire::s6s4t::GetRunStop(bytes);
  CHECK(m.stop_time() == 1'700'000'030'000ULL);
  CHECK(m.job_id()->str() == "job-a1");
  CHECK(m.command_id()->str() == "cmd-7");
  const auto back = kafka::decode_6s4t(message);
  REQUIRE(back);
  CHECK(back->stop_time_ms == s.stop_time_ms);
  CHECK(back->run_name == "run 17");
  CHECK(back->service_id == "writer1");
  CHECK_FALSE(kafka::decode_pl72(message));
  CHECK_FALSE(kafka::decode_6s4t(std::span<const std::byte>()));
}

}  // TEST_SUITE

}  // namespace weir::test

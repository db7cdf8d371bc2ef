// wrdn (a file finished writing) both ways against flatc's generated code.
#include <doctest/doctest.h>

#include <flatbuffers/flatbuffers.h>

#include "weir/kafka/run_messages.hpp"
#include "wire_wrdn.hpp"

namespace weir::test {

TEST_SUITE("kafka.codec") {

TEST_CASE("wrdn: weir's finished-writing notice reads back with the generated code and with weir's decoder") {
  kafka::FinishedWriting f;
  f.service_id = "weir-daq1";
  f.job_id = "job-a1";
  f.error_encountered = false;
  f.file_name = "/data/daq1_run000017_0002.h5";
  f.metadata = R"({"sha256":"9f86d0"})";
  const std::vector<std::byte> message = kafka::encode_wrdn(f);
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(message.data());
  flatbuffers::Verifier verifier(bytes, message.size());
  REQUIRE(kafka::wire::wrdn::VerifyFinishedWritingBuffer(verifier));
  REQUIRE(kafka::wire::wrdn::FinishedWritingBufferHasIdentifier(bytes));
  const auto& m = *kafka::wire::wrdn::GetFinishedWriting(bytes);
  CHECK(m.service_id()->str() == "weir-daq1");
  CHECK(m.job_id()->str() == "job-a1");
  CHECK_FALSE(m.error_encountered());
  CHECK(m.file_name()->str() == "/data/daq1_run000017_0002.h5");
  CHECK(m.metadata()->str() == f.metadata);
  CHECK(m.message() == nullptr);
  const auto back = kafka::decode_wrdn(message);
  REQUIRE(back);
  CHECK(back->service_id == f.service_id);
  CHECK(back->job_id == f.job_id);
  CHECK_FALSE(back->error_encountered);
  CHECK(back->file_name == f.file_name);
  CHECK(back->metadata == f.metadata);
  CHECK(back->message.empty());
  SUBCASE("an error and its message") {
    f.error_encountered = true;
    f.message = "disk full";
    const auto failed = kafka::decode_wrdn(kafka::encode_wrdn(f));
    REQUIRE(failed);
    CHECK(failed->error_encountered);
    CHECK(failed->message == "disk full");
  }
}

TEST_CASE("wrdn made by the generated code alone decodes, and a wrong, cut or incomplete one is refused naming why") {
  namespace w = kafka::wire::wrdn;
  flatbuffers::FlatBufferBuilder b;
  w::FinishFinishedWritingBuffer(b, w::CreateFinishedWritingDirect(b, "fw1", "j9", true, "/d/f.nxs", nullptr, "oops"));
  const auto message = std::as_bytes(std::span(b.GetBufferPointer(), b.GetSize()));
  const auto done = kafka::decode_wrdn(message);
  REQUIRE(done);
  CHECK(done->service_id == "fw1");
  CHECK(done->job_id == "j9");
  CHECK(done->error_encountered);
  CHECK(done->file_name == "/d/f.nxs");
  CHECK(done->metadata.empty());
  CHECK(done->message == "oops");

  kafka::RunStop stop;
  stop.job_id = "j9";
  const auto wrong = kafka::decode_wrdn(kafka::encode_6s4t(stop));
  REQUIRE_FALSE(wrong);
  CHECK_MESSAGE(wrong.error().what.find("not a wrdn") != std::string::npos, wrong.error().what);
  CHECK_FALSE(kafka::decode_6s4t(message));
  CHECK_FALSE(kafka::decode_wrdn(std::span<const std::byte>()));

  for (const std::size_t cut : {std::size_t{8}, std::size_t{12}, message.size() / 2, message.size() - 1}) {
    CAPTURE(cut);
    const std::vector<std::byte> head(message.begin(), message.begin() + static_cast<std::ptrdiff_t>(cut));
    const auto broken = kafka::decode_wrdn(head);
    REQUIRE_FALSE(broken);
    CHECK_MESSAGE((broken.error().what.find("does not verify") != std::string::npos ||
                   broken.error().what.find("not a wrdn") != std::string::npos),
                  broken.error().what);
  }

  // Required fields: a buffer without a file_name (made by hand: the generated builder refuses to) does not verify.
  flatbuffers::FlatBufferBuilder nofile;
  const auto service = nofile.CreateString("fw1");
  const auto job = nofile.CreateString("j9");
  const auto start = nofile.StartTable();
  nofile.AddOffset(w::FinishedWriting::VT_SERVICE_ID, service);
  nofile.AddOffset(w::FinishedWriting::VT_JOB_ID, job);
  nofile.Finish(flatbuffers::Offset<w::FinishedWriting>(nofile.EndTable(start)), w::FinishedWritingIdentifier());
  const auto incomplete = kafka::decode_wrdn(std::as_bytes(std::span(nofile.GetBufferPointer(), nofile.GetSize())));
  REQUIRE_FALSE(incomplete);
  CHECK_MESSAGE(incomplete.error().what.find("does not verify") != std::string::npos, incomplete.error().what);

  flatbuffers::FlatBufferBuilder nojob;
  w::FinishFinishedWritingBuffer(nojob, w::CreateFinishedWritingDirect(nojob, "fw1", "", false, "/d/f.nxs"));
  const auto without = kafka::decode_wrdn(std::as_bytes(std::span(nojob.GetBufferPointer(), nojob.GetSize())));
  REQUIRE_FALSE(without);
  CHECK_MESSAGE(without.error().what.find("job_id") != std::string::npos, without.error().what);
}

}  // TEST_SUITE

}  // namespace weir::test

// The ann protocol's values: golden layout (a change must bump kProtocolVersion here too) and coding.
#include <doctest/doctest.h>

#include <array>
#include <cstddef>
#include <cstring>

#include "weir/ann/protocol.hpp"

namespace weir::ann {

TEST_CASE("ann protocol: golden layout of version 1") {
  CHECK(kProtocolVersion == 1);  // spelled as a literal on purpose: any layout change fails here
  CHECK(kRequestMagic == 0x514E4E41U);
  CHECK(kAnswerMagic == 0x524E4E41U);
  CHECK(kStatusMagic == 0x534E4E41U);
  CHECK(kMaxHits == 256);
  CHECK(sizeof(Request) == 32);
  CHECK(offsetof(Request, version) == 4);
  CHECK(offsetof(Request, kind) == 6);
  CHECK(offsetof(Request, id) == 8);
  CHECK(offsetof(Request, k) == 16);
  CHECK(offsetof(Request, ef) == 20);
  CHECK(offsetof(Request, like_bytes) == 24);
  CHECK(sizeof(AnswerHeader) == 48);
  CHECK(offsetof(AnswerHeader, status) == 6);
  CHECK(offsetof(AnswerHeader, id) == 8);
  CHECK(offsetof(AnswerHeader, count) == 16);
  CHECK(offsetof(AnswerHeader, indexed) == 24);
  CHECK(offsetof(AnswerHeader, lag) == 32);
  CHECK(offsetof(AnswerHeader, service_ns) == 40);
  CHECK(sizeof(AnswerHit) == 12);
  CHECK(sizeof(ServiceStatus) == 96);
  CHECK(offsetof(ServiceStatus, pid) == 8);
  CHECK(offsetof(ServiceStatus, dim) == 12);
  CHECK(offsetof(ServiceStatus, indexed) == 32);
  CHECK(offsetof(ServiceStatus, started_ns) == 40);
  CHECK(offsetof(ServiceStatus, queries) == 88);
  CHECK(answer_bytes(10) == 168);
  CHECK(static_cast<int>(QueryKind::vector) == 1);
  CHECK(static_cast<int>(QueryKind::like) == 2);
  CHECK(static_cast<int>(ServiceState::serving) == 2);
}

TEST_CASE("ann protocol: key names") {
  CHECK(status_key("pulses") == "ann/pulses/service");
  CHECK(request_label("pulses") == "ann/pulses/q");
  CHECK(answer_label("pulses") == "ann/pulses/r");
  CHECK(request_key("pulses", 4242, 7) == "ann/pulses/q/4242.7");
  CHECK(answer_key("pulses", 4242, 7) == "ann/pulses/r/4242.7");
}

TEST_CASE("ann protocol: a request round-trips, and foreign or short values are refused") {
  std::array<std::byte, 128> buf{};
  Request r{};
  r.kind = static_cast<std::uint8_t>(QueryKind::like);
  r.id = 99;
  r.k = 10;
  r.ef = 40;
  const std::size_t n = encode_request(r, "pulses/adc0/17", buf);
  REQUIRE(n == sizeof(Request) + 14);
  std::string_view like;
  const auto back = decode_request(std::span<const std::byte>(buf.data(), n), like);
  REQUIRE(back);
  CHECK(back->id == 99);
  CHECK(back->k == 10);
  CHECK(back->ef == 40);
  CHECK(like == "pulses/adc0/17");
  CHECK_FALSE(decode_request(std::span<const std::byte>(buf.data(), n - 1), like));  // truncated
  CHECK(encode_request(r, "x", std::span<std::byte>(buf.data(), sizeof(Request))) == 0);  // too small
  buf[4] = std::byte{2};  // version 2
  CHECK_FALSE(decode_request(std::span<const std::byte>(buf.data(), n), like));
  buf[4] = std::byte{1};
  buf[0] = std::byte{0};  // magic
  CHECK_FALSE(decode_request(std::span<const std::byte>(buf.data(), n), like));
  r.kind = static_cast<std::uint8_t>(QueryKind::like);
  CHECK(encode_request(r, "", buf) == sizeof(Request));
  CHECK_FALSE(decode_request(std::span<const std::byte>(buf.data(), sizeof(Request)), like));  // like without a key
}

TEST_CASE("ann protocol: an answer's hits must fit its bytes") {
  std::array<std::byte, answer_bytes(2)> buf{};
  AnswerHeader h{};
  h.magic = kAnswerMagic;
  h.version = kProtocolVersion;
  h.id = 5;
  h.count = 2;
  std::memcpy(buf.data(), &h, sizeof h);
  const AnswerHit hit{17, 3, 0.5F};
  std::memcpy(buf.data() + sizeof h + sizeof hit, &hit, sizeof hit);
  const auto back = decode_answer(buf);
  REQUIRE(back);
  CHECK(back->id == 5);
  CHECK(answer_hit(buf, 1).slot == 17);
  CHECK(answer_hit(buf, 1).generation == 3);
  CHECK(answer_hit(buf, 1).score == 0.5F);
  CHECK_FALSE(decode_answer(std::span<const std::byte>(buf.data(), buf.size() - 1)));
}

}  // namespace weir::ann

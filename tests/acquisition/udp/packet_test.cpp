// Both packet codecs against bytes built by hand from the format declarations, not by the encoders:
// every field, every refusal reason, and encode -> decode round trips.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "weir/udp/raw_packet.hpp"
#include "weir/udp/vita49.hpp"

using namespace weir::acq;
using weir::core::Dtype;

namespace {

std::vector<std::byte> bytes(std::initializer_list<unsigned> values) {
  std::vector<std::byte> out;
  for (unsigned v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

void put_be32(std::vector<std::byte>& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::byte>((v >> shift) & 0xFF));
}

void put_le(std::vector<std::byte>& out, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xFF));
}

// A raw packet laid out field by field from the table in raw_packet.hpp.
std::vector<std::byte> raw_packet(std::uint32_t stream, std::uint32_t count, std::uint64_t seq, std::uint64_t first,
                                  std::uint64_t time_ns, std::uint8_t dtype, std::size_t sample_bytes) {
  std::vector<std::byte> out = bytes({'W', 'R', 'A', 'W', 1, dtype, 0, 0});
  put_le(out, stream, 4);
  put_le(out, count, 4);
  put_le(out, seq, 8);
  put_le(out, first, 8);
  put_le(out, time_ns, 8);
  for (std::size_t i = 0; i < count * sample_bytes; ++i) out.push_back(static_cast<std::byte>(i + 1));
  return out;
}

}  // namespace

TEST_SUITE("acquisition.udp.packet") {

TEST_CASE("a VITA 49 packet with every optional field decodes in place, samples big-endian") {
  // type 1, C, T, TSI utc, TSF real-time ps, count 13, size 11 words:
  // header, stream id, class id (2), integer ts, fractional ts (2), payload (3 words = 6 i16), trailer
  std::vector<std::byte> p;
  put_be32(p, 0x1U << 28 | 1U << 27 | 1U << 26 | 1U << 22 | 2U << 20 | 13U << 16 | 11U);
  put_be32(p, 0xA1B2C3D4);
  put_be32(p, 0x00123456);
  put_be32(p, 0x00010002);
  put_be32(p, 1'700'000'000);
  put_be32(p, 0x00000001);
  put_be32(p, 0x00000002);
  for (unsigned v : {0x0001'0002U, 0xFFFF'8000U, 0x7FFF'0000U}) put_be32(p, v);
  put_be32(p, 0xCAFEF00D);
  REQUIRE(p.size() == 44);

  PacketView v;
  REQUIRE(decode_vita49(p, Dtype::i16, v) == PacketStatus::ok);
  CHECK(v.format == PacketFormat::vita49);
  CHECK(v.stream_id == 0xA1B2C3D4);
  CHECK(v.has_class_id);
  CHECK(v.class_id == 0x00123456'00010002ULL);
  CHECK(v.tsi == Tsi::utc);
  CHECK(v.tsf == Tsf::real_time_ps);
  CHECK(v.integer_ts == 1'700'000'000U);
  CHECK(v.fractional_ts == 0x1'00000002ULL);
  CHECK(v.sequence == 13);
  CHECK(v.has_trailer);
  CHECK(v.trailer == 0xCAFEF00D);
  CHECK(v.samples == 6);
  CHECK(v.payload_bytes == 12);
  CHECK(v.big_endian);
  CHECK(v.payload == p.data() + 28);  // in place: no copy
  CHECK(v.dtype == Dtype::i16);
}

TEST_CASE("a minimal VITA 49 packet without stream id, timestamps or trailer decodes") {
  std::vector<std::byte> p;
  put_be32(p, 0U << 28 | 7U << 16 | 3U);
  put_be32(p, 0x11223344);
  put_be32(p, 0x55667788);
  PacketView v;
  REQUIRE(decode_vita49(p, Dtype::f32, v) == PacketStatus::ok);
  CHECK(v.stream_id == 0);
  CHECK(v.tsi == Tsi::none);
  CHECK(v.tsf == Tsf::none);
  CHECK_FALSE(v.has_trailer);
  CHECK(v.samples == 2);
  CHECK(v.sequence == 7);
  CHECK(v.payload == p.data() + 4);
}

TEST_CASE("VITA 49 packets are refused for every malformed reason") {
  PacketView v;
  SUBCASE("too_short: less than a header word") {
    CHECK(decode_vita49(bytes({0x10, 0x00}), Dtype::i16, v) == PacketStatus::too_short);
  }
  SUBCASE("too_short: fewer words than the header's fields announce") {
    std::vector<std::byte> p;
    put_be32(p, 1U << 28 | 1U << 22 | 2U << 20 | 4U);  // stream id + 1 + 2 timestamp words = 5 needed
    put_be32(p, 1);
    put_be32(p, 2);
    put_be32(p, 3);
    CHECK(decode_vita49(p, Dtype::i16, v) == PacketStatus::too_short);
  }
  SUBCASE("bad_type: a context packet") {
    std::vector<std::byte> p;
    put_be32(p, 4U << 28 | 2U);
    put_be32(p, 1);
    CHECK(decode_vita49(p, Dtype::i16, v) == PacketStatus::bad_type);
  }
  SUBCASE("size_mismatch: the size field disagrees with the datagram") {
    std::vector<std::byte> p;
    put_be32(p, 1U << 28 | 5U);
    put_be32(p, 1);
    put_be32(p, 2);
    put_be32(p, 3);
    CHECK(decode_vita49(p, Dtype::i16, v) == PacketStatus::size_mismatch);
  }
  SUBCASE("size_mismatch: a datagram that is not whole words") {
    std::vector<std::byte> p;
    put_be32(p, 1U << 28 | 3U);
    put_be32(p, 1);
    put_be32(p, 2);
    p.push_back(std::byte{0});
    CHECK(decode_vita49(p, Dtype::i16, v) == PacketStatus::size_mismatch);
  }
  SUBCASE("empty_payload: header and stream id only") {
    std::vector<std::byte> p;
    put_be32(p, 1U << 28 | 2U);
    put_be32(p, 1);
    CHECK(decode_vita49(p, Dtype::i16, v) == PacketStatus::empty_payload);
  }
  SUBCASE("misaligned_payload: one word of payload for an 8-byte dtype") {
    std::vector<std::byte> p;
    put_be32(p, 1U << 28 | 3U);
    put_be32(p, 1);
    put_be32(p, 2);
    CHECK(decode_vita49(p, Dtype::f64, v) == PacketStatus::misaligned_payload);
  }
  SUBCASE("bad_dtype: a stream dtype that names no sample type") {
    std::vector<std::byte> p;
    put_be32(p, 1U << 28 | 3U);
    put_be32(p, 1);
    put_be32(p, 2);
    CHECK(decode_vita49(p, static_cast<Dtype>(99), v) == PacketStatus::bad_dtype);
  }
}

TEST_CASE("a VITA 49 packet encoded and decoded keeps its fields and samples") {
  Vita49Fields f;
  f.stream_id = 42;
  f.with_class_id = true;
  f.class_id = 0x00FFEEDD'12345678ULL;
  f.tsi = Tsi::gps;
  f.tsf = Tsf::sample_count;
  f.integer_ts = 99;
  f.fractional_ts = 123456789;
  f.count = 0x1F;  // only the low 4 bits go out
  f.with_trailer = true;
  f.trailer = 0x40000000;
  const std::array<std::int16_t, 4> in{1, -2, 32767, -32768};
  std::array<std::byte, 256> buf{};
  const std::size_t n = encode_vita49(f, Dtype::i16, std::as_bytes(std::span(in)), buf);
  REQUIRE(n == 4U * (1 + 1 + 2 + 1 + 2 + 2 + 1));
  CHECK(buf[0] == std::byte{0x1C});           // type 1, C and T set
  CHECK(buf[29] == std::byte{0x01});          // first sample 0x0001, big-endian
  PacketView v;
  REQUIRE(decode_vita49(std::span(buf.data(), n), Dtype::i16, v) == PacketStatus::ok);
  CHECK(v.stream_id == 42);
  CHECK(v.class_id == f.class_id);
  CHECK(v.tsi == Tsi::gps);
  CHECK(v.tsf == Tsf::sample_count);
  CHECK(v.integer_ts == 99);
  CHECK(v.fractional_ts == 123456789);
  CHECK(v.sequence == 0xF);
  CHECK(v.trailer == 0x40000000);
  REQUIRE(v.samples == 4);
  CHECK((static_cast<unsigned>(v.payload[2]) << 8 | static_cast<unsigned>(v.payload[3])) == 0xFFFE);

  SUBCASE("an odd number of i16 samples is not whole words and is not encoded") {
    CHECK(encode_vita49(f, Dtype::i16, std::as_bytes(std::span(in).first(3)), buf) == 0);
  }
  SUBCASE("a buffer too small is not written past") {
    CHECK(encode_vita49(f, Dtype::i16, std::as_bytes(std::span(in)), std::span(buf).first(20)) == 0);
  }
}

TEST_CASE("a raw packet decodes in place with every header field") {
  const auto p = raw_packet(7, 3, 0x0102030405060708ULL, 1'000'000'000'123ULL, 1'700'000'000'000'000'000ULL, 3, 2);
  REQUIRE(p.size() == 46);
  PacketView v;
  REQUIRE(decode_raw(p, v) == PacketStatus::ok);
  CHECK(v.format == PacketFormat::raw);
  CHECK(v.stream_id == 7);
  CHECK(v.samples == 3);
  CHECK(v.sequence == 0x0102030405060708ULL);
  CHECK(v.first_sample == 1'000'000'000'123ULL);
  CHECK(v.timestamp_ns == 1'700'000'000'000'000'000ULL);
  CHECK(v.dtype == Dtype::i16);
  CHECK_FALSE(v.big_endian);
  CHECK(v.payload == p.data() + 40);
  CHECK(v.payload_bytes == 6);
}

TEST_CASE("raw packets are refused for every malformed reason") {
  PacketView v;
  SUBCASE("too_short") {
    auto p = raw_packet(1, 1, 0, 0, 0, 3, 2);
    p.resize(39);
    CHECK(decode_raw(p, v) == PacketStatus::too_short);
  }
  SUBCASE("bad_magic") {
    auto p = raw_packet(1, 1, 0, 0, 0, 3, 2);
    p[0] = std::byte{'X'};
    CHECK(decode_raw(p, v) == PacketStatus::bad_magic);
  }
  SUBCASE("bad_version") {
    auto p = raw_packet(1, 1, 0, 0, 0, 3, 2);
    p[4] = std::byte{2};
    CHECK(decode_raw(p, v) == PacketStatus::bad_version);
  }
  SUBCASE("bad_dtype: 0 and 11") {
    CHECK(decode_raw(raw_packet(1, 1, 0, 0, 0, 0, 2), v) == PacketStatus::bad_dtype);
    CHECK(decode_raw(raw_packet(1, 1, 0, 0, 0, 11, 2), v) == PacketStatus::bad_dtype);
  }
  SUBCASE("size_mismatch: a sample missing, a byte too many, a count that overflows") {
    auto p = raw_packet(1, 4, 0, 0, 0, 3, 2);
    p.pop_back();
    CHECK(decode_raw(p, v) == PacketStatus::size_mismatch);
    p.push_back(std::byte{0});
    p.push_back(std::byte{0});
    CHECK(decode_raw(p, v) == PacketStatus::size_mismatch);
    auto huge = raw_packet(1, 0xFFFFFFFFU, 0, 0, 0, 10, 0);  // 4 Gi c64 samples announced, none sent
    CHECK(decode_raw(huge, v) == PacketStatus::size_mismatch);
  }
  SUBCASE("empty_payload") {
    CHECK(decode_raw(raw_packet(1, 0, 0, 0, 0, 3, 2), v) == PacketStatus::empty_payload);
  }
}

TEST_CASE("a raw packet encoded and decoded keeps its fields and samples") {
  RawFields f;
  f.stream_id = 3;
  f.sequence = 77;
  f.first_sample = 5000;
  f.timestamp_ns = 123;
  const std::array<double, 2> in{1.5, -2.25};
  std::array<std::byte, 64> buf{};
  const std::size_t n = encode_raw(f, Dtype::f64, std::as_bytes(std::span(in)), buf);
  REQUIRE(n == 56);
  PacketView v;
  REQUIRE(decode_raw(std::span(buf.data(), n), v) == PacketStatus::ok);
  CHECK(v.stream_id == 3);
  CHECK(v.sequence == 77);
  CHECK(v.first_sample == 5000);
  CHECK(v.timestamp_ns == 123);
  CHECK(v.dtype == Dtype::f64);
  double second = 0;
  std::memcpy(&second, v.payload + 8, 8);
  CHECK(second == -2.25);
  CHECK(encode_raw(f, Dtype::f64, std::as_bytes(std::span(in)), std::span(buf).first(55)) == 0);
}

TEST_CASE("every refusal reason has a distinct name for its key") {
  std::vector<std::string_view> names;
  for (std::size_t i = 0; i < kPacketStatusCount; ++i) names.push_back(packet_status_name(static_cast<PacketStatus>(i)));
  for (std::size_t i = 0; i < names.size(); ++i) {
    CHECK(names[i] != "unknown");
    for (std::size_t j = 0; j < i; ++j) CHECK(names[i] != names[j]);
  }
}

}  // TEST_SUITE
